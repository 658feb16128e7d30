"""Word-level syntax onto subword pieces, as files line-aligned with the ``.bpe`` corpus.

For each sentence: the UPOS of every piece (all pieces of a word get the word's tag), the BIEO
tag of every piece (Sennrich & Haddow 2016: B first, I middle, E last piece of a split word,
O a word that was not split), the word-level heads (CoNLL-U convention, so syntax-distance
masks are computed per batch from them), the binary tree for RvNN preordering, and the tree
as two model inputs per subword: the index of its word and the head of that word.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from wordorder.errors import WordorderError
from wordorder.io import atomic_paths, iter_lines
from wordorder.progress import progress
from wordorder.syntax.binarize import binarize_counted, flat_tree, to_sexpr
from wordorder.syntax.conllu import read_conllu
from wordorder.text.subword import word_index


def bieo_tags(word_index: Sequence[int]) -> list[str]:
    """BIEO tag of each piece given the word index of each piece.

    >>> bieo_tags([0, 0, 0, 1])   # un@@ believ@@ able story
    ['B', 'I', 'E', 'O']
    """
    wi = np.asarray(word_index)
    if wi.size == 0:
        return []
    first = np.r_[True, wi[1:] != wi[:-1]]
    last = np.r_[wi[1:] != wi[:-1], True]
    tags = np.where(first & last, "O", np.where(first, "B", np.where(last, "E", "I")))
    return tags.tolist()


def project_tags(tags: Sequence[str], word_index: Sequence[int]) -> list[str]:
    """The word-level ``tags`` repeated for every piece of each word."""
    return [tags[i] for i in word_index]


def chain_heads(n: int) -> list[int]:
    """The fallback tree of a sentence the parser gave none: each word under the one before, so
    syntax distances become linear distances.

    >>> chain_heads(3)
    [0, 1, 2]
    """
    return list(range(n))


def project_file(
    conllu: str | Path,
    bpe: str | Path,
    out_pos: str | Path,
    out_bieo: str | Path,
    out_heads: str | Path,
    out_tree: str | Path,
    out_dep: str | Path | None = None,
    out_word: str | Path | None = None,
    out_head: str | Path | None = None,
    progress_bar: bool = True,
) -> dict:
    """Write the syntax files for one split (atomically); return counts.

    ``out_pos``/``out_dep``: the word's UPOS / dependency label on each of its subwords
    (``_`` for a sentence the parser gave no tree); ``out_bieo``: the subword's place in its
    word; ``out_heads``: the word-level heads; ``out_tree``: the binarised tree;
    ``out_word``/``out_head``: per subword, its word's index and head (given together; a
    sentence without a tree gets :func:`chain_heads`).

    Raises:
        WordorderError: a ``.bpe`` line has a different number of words than its parse.
    """
    conllu, bpe = Path(conllu), Path(bpe)
    counts: Counter[str] = Counter()
    if (out_word is None) != (out_head is None):
        raise ValueError("out_word and out_head go together")
    extra = [p for p in (out_dep, out_word, out_head) if p is not None]
    with atomic_paths(out_pos, out_bieo, out_heads, out_tree, *extra) as tmps:
        files = [open(t, "w", encoding="utf-8") for t in tmps]
        try:
            f_pos, f_bieo, f_heads, f_tree = files[:4]
            rest = iter(files[4:])
            f_dep = next(rest) if out_dep is not None else None
            f_word, f_head = (next(rest), next(rest)) if out_word is not None else (None, None)
            pairs = zip(read_conllu(conllu), iter_lines(bpe), strict=True)
            bar = progress(pairs, desc=f"syntax {bpe.name}", unit=" sent", enabled=progress_bar)
            try:
                for number, (sent, line) in enumerate(bar, start=1):
                    wi = word_index(line.split())
                    n_words = wi[-1] + 1 if wi else 0
                    if n_words != len(sent):
                        raise WordorderError(
                            f"{n_words} words in the subword line but {len(sent)} in the parse",
                            path=bpe,
                            line=number,
                            hint=f"{conllu} and {bpe} must come from the same tokenized file",
                        )
                    f_pos.write(" ".join(project_tags(sent.upos, wi)) + "\n")
                    f_bieo.write(" ".join(bieo_tags(wi)) + "\n")
                    if f_dep is not None:
                        labels = sent.deprels if sent.heads is not None else ["_"] * len(sent)
                        f_dep.write(" ".join(project_tags(labels, wi)) + "\n")
                    counts["sentences"] += 1
                    if f_word is not None and f_head is not None:  # given together
                        tree_heads = (
                            sent.heads.tolist()
                            if sent.heads is not None
                            else chain_heads(len(sent))
                        )
                        f_word.write(" ".join(map(str, wi)) + "\n")
                        f_head.write(" ".join(str(tree_heads[w]) for w in wi) + "\n")
                    if sent.heads is None or not len(sent):
                        # no tree: an empty heads line, and the flat fallback tree for the RvNN
                        counts["no_tree"] += bool(len(sent))
                        f_heads.write("\n")
                        f_tree.write((to_sexpr(flat_tree(len(sent))) if len(sent) else "") + "\n")
                        continue
                    f_heads.write(" ".join(map(str, sent.heads.tolist())) + "\n")
                    # punctuation as a tail of its phrase, as in the reference's Enju trees
                    tree, lifts = binarize_counted(sent.heads, [u == "PUNCT" for u in sent.upos])
                    counts["nonprojective"] += bool(lifts)
                    f_tree.write(to_sexpr(tree) + "\n")
            except ValueError as e:
                if "zip()" not in str(e):
                    raise
                raise WordorderError(
                    f"{conllu} and {bpe} have different numbers of sentences",
                    path=bpe,
                    hint="rerun the parse and subword steps of this split",
                ) from None
        finally:
            for f in files:
                f.close()
    return dict(counts)
