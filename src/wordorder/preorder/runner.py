"""File-level steps of the preordering stage, as the CLI and the rules call them.

Each step reads line-aligned files (tokenized source, its CoNLL-U parse, binary trees, Pharaoh
alignments), checks that they agree line by line, calls the in-memory preorderers, and writes
its outputs atomically. Annotations are always those of the pipeline's own tokens: token *i*
of the parse is token *i* of the line.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from wordorder.align.pharaoh import read_alignments
from wordorder.errors import WordorderError
from wordorder.io import iter_lines, write_json
from wordorder.preorder.gold import gold_permutation
from wordorder.preorder.permutation import write_permutations
from wordorder.progress import progress
from wordorder.syntax.binarize import from_sexpr, leaves
from wordorder.syntax.conllu import read_conllu


def read_tokens(path: str | Path) -> list[list[str]]:
    return [line.split() for line in iter_lines(path)]


def read_pos(conllu: str | Path, tokens: list[list[str]], tagset: str = "xpos") -> list[list[str]]:
    """POS tags of every token (``xpos``, falling back to UPOS where it is ``_``; or ``upos``).

    Raises:
        WordorderError: the parse does not match the tokenized lines.
    """
    out: list[list[str]] = []
    for k, sent in enumerate(read_conllu(conllu), start=1):
        if k > len(tokens) or sent.forms != tokens[k - 1]:
            raise WordorderError(
                f"sentence {k} of the parse does not match line {k} of the tokenized source",
                path=conllu,
                hint="rerun the parse step on the current tokenized file",
            )
        if tagset == "upos":
            out.append(list(sent.upos))
        else:
            out.append([x if x != "_" else u for x, u in zip(sent.xpos, sent.upos)])
    if len(out) != len(tokens):
        raise WordorderError(
            f"{len(out)} parsed sentences for {len(tokens)} tokenized lines", path=conllu
        )
    return out


def read_trees(path: str | Path, tokens: list[list[str]]) -> list:
    """Binary trees (s-expressions, one per line; empty line = empty sentence),
    checked against the tokens."""
    trees: list = []
    for k, line in enumerate(iter_lines(path), start=1):
        if k > len(tokens):
            raise WordorderError(
                f"more trees than the {len(tokens)} tokenized lines", path=path, line=k
            )
        n = len(tokens[k - 1])
        if not line.strip():
            if n:
                raise WordorderError(f"empty tree for a sentence of {n} words", path=path, line=k)
            trees.append(None)
            continue
        try:
            tree = from_sexpr(line)
        except ValueError as e:
            raise WordorderError(str(e), path=path, line=k) from None
        if leaves(tree) != list(range(n)):
            raise WordorderError(
                f"the tree's leaves are not the {n} words of the sentence in order",
                path=path,
                line=k,
                hint="rerun syntax_project on the current parse",
            )
        trees.append(tree)
    if len(trees) != len(tokens):
        raise WordorderError(f"{len(trees)} trees for {len(tokens)} tokenized lines", path=path)
    return trees


def read_links(
    align: str | Path, src_tokens: list[list[str]], tgt_lens: list[int] | None = None
) -> list[np.ndarray]:
    """Alignments checked against the source lengths (and target lengths when given)."""
    src_lens = [len(t) for t in src_tokens]
    if tgt_lens is None:  # the target side is not at hand: check line count and source indices only
        tgt_lens = [np.iinfo(np.int64).max] * len(src_lens)
    return read_alignments(align, src_lens, tgt_lens)


def sample_indices(n: int, max_sentences: int | None, seed: int) -> np.ndarray:
    """A seeded sample of at most ``max_sentences`` line numbers, in corpus order."""
    if not max_sentences or max_sentences >= n:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=max_sentences, replace=False))


def gold_step(align: Path, tok: Path, output: Path, key: str, attach: str) -> dict:
    tokens = read_tokens(tok)
    links = read_links(align, tokens)
    perms = [
        gold_permutation(lk, len(t), key, attach)
        for lk, t in zip(progress(links, desc="gold preorder", unit=" sent"), tokens)
    ]
    write_permutations(output, perms)
    return {
        "sentences": len(perms),
        "reordered": sum(int(np.any(p != np.arange(len(p)))) for p in perms),
    }


def _btg_inputs(
    tok: Path, conllu: Path, classes: Path, pos_tagset: str
) -> list[tuple[list[str], list[str], list[str]]]:
    from wordorder.preorder.wordclass import classes_of, read_word_classes

    tokens = read_tokens(tok)
    pos = read_pos(conllu, tokens, pos_tagset)
    cls = read_word_classes(classes)
    return [(t, p, classes_of(t, cls)) for t, p in zip(tokens, pos)]


def btg_train_step(
    tok: Path, conllu: Path, classes: Path, align: Path, model: Path, stats: Path, options: dict
) -> dict:
    from wordorder.preorder.btg import BTGOptions, BTGPreorderer

    opts = dict(options)
    max_sentences, pos_tagset = opts.pop("max_sentences", None), opts.pop("pos", "xpos")
    sentences = _btg_inputs(tok, conllu, classes, pos_tagset)
    links = read_links(align, [s[0] for s in sentences])
    keep = sample_indices(len(sentences), max_sentences, opts.get("seed", 1))
    start = time.perf_counter()
    trained, info = BTGPreorderer.train(
        [sentences[i] for i in keep], [links[i] for i in keep], BTGOptions(**opts)
    )
    info = {
        "corpus_sentences": len(sentences),
        "sampled": len(keep),
        **info,
        "train_seconds": round(time.perf_counter() - start, 2),
    }
    trained.save(model)
    write_json(stats, info)
    return info


def btg_apply_step(
    model: Path,
    tok: Path,
    conllu: Path,
    classes: Path,
    output: Path,
    pos_tagset: str,
    threads: int | None = None,
) -> dict:
    from wordorder.preorder.btg import BTGPreorderer

    preorderer = BTGPreorderer.load(model)
    sentences = _btg_inputs(tok, conllu, classes, pos_tagset)
    start = time.perf_counter()
    perms = preorderer.preorder(sentences, threads=threads)
    seconds = time.perf_counter() - start
    write_permutations(output, perms)
    return {
        "sentences": len(perms),
        "seconds": round(seconds, 2),
        "sentences_per_second": round(len(perms) / max(seconds, 1e-9), 1),
    }


def _rvnn_inputs(tok: Path, conllu: Path, trees: Path) -> tuple[list, list, list]:
    tokens = read_tokens(tok)
    return tokens, read_pos(conllu, tokens, "upos"), read_trees(trees, tokens)


def rvnn_train_step(
    tok: Path, conllu: Path, trees: Path, align: Path, model: Path, stats: Path, options: dict
) -> dict:
    from wordorder.preorder.rvnn import RvNNOptions, train_rvnn

    opts = dict(options)
    max_sentences = opts.pop("max_sentences", None)
    words, pos, tree_list = _rvnn_inputs(tok, conllu, trees)
    links = read_links(align, words)
    keep = [
        i
        for i in sample_indices(len(words), max_sentences, opts.get("seed", 1))
        if tree_list[i] is not None
    ]
    start = time.perf_counter()
    trained, info = train_rvnn(
        [words[i] for i in keep],
        [pos[i] for i in keep],
        [tree_list[i] for i in keep],
        [links[i] for i in keep],
        RvNNOptions(**opts),
    )
    info = {
        "corpus_sentences": len(words),
        "sampled": len(keep),
        **info,
        "train_seconds": round(time.perf_counter() - start, 2),
    }
    trained.save(model)
    write_json(stats, info)
    return info


def rvnn_apply_step(model: Path, tok: Path, conllu: Path, trees: Path, output: Path) -> dict:
    from wordorder.preorder.rvnn import RvNNPreorderer

    preorderer = RvNNPreorderer.load(model)
    words, pos, tree_list = _rvnn_inputs(tok, conllu, trees)
    todo = [i for i, t in enumerate(tree_list) if t is not None]
    start = time.perf_counter()
    found = preorderer.preorder(
        [words[i] for i in todo], [pos[i] for i in todo], [tree_list[i] for i in todo]
    )
    seconds = time.perf_counter() - start
    perms = [np.arange(len(w), dtype=np.int64) for w in words]
    for i, perm in zip(todo, found):
        perms[i] = perm
    write_permutations(output, perms)
    return {
        "sentences": len(perms),
        "seconds": round(seconds, 2),
        "sentences_per_second": round(len(todo) / max(seconds, 1e-9), 1),
    }
