"""File-level steps of the preordering stage, as the CLI and the rules call them.

Each step reads line-aligned files (tokenized source, its CoNLL-U parse, binary trees, Pharaoh
alignments), checks that they agree line by line, calls the in-memory preorderers, and writes
its outputs atomically. Annotations are always those of the pipeline's own tokens: token *i*
of the parse is token *i* of the line.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from wordorder.align.pharaoh import read_alignments
from wordorder.errors import WordorderError
from wordorder.io import iter_lines, write_json
from wordorder.preorder.crossfit import (
    Fold,
    apply_by_fold,
    check_fold,
    check_models,
    fold_info,
    training_pool,
)
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


def train_sample(n: int, max_sentences: int | None, seed: int, fold: Fold | None) -> np.ndarray:
    """The training sentences of a model: a seeded sample of at most ``max_sentences`` of those
    outside the held-out fold (of all of them without folds), in corpus order."""
    pool = training_pool(n, fold)
    return pool[sample_indices(len(pool), max_sentences, seed)]


def btg_train_step(
    tok: Path,
    conllu: Path,
    classes: Path,
    align: Path,
    model: Path,
    stats: Path,
    options: dict,
    fold: int | None = None,
    folds: int | None = None,
) -> dict:
    """Train the BTG model on the training split, or (``fold``, ``folds``) on all but one fold."""
    from wordorder.preorder.btg import BTGOptions, BTGPreorderer

    opts = dict(options)
    max_sentences, pos_tagset = opts.pop("max_sentences", None), opts.pop("pos", "xpos")
    sentences = _btg_inputs(tok, conllu, classes, pos_tagset)
    held = check_fold(fold, folds, len(sentences), "btg")
    links = read_links(align, [s[0] for s in sentences])
    keep = train_sample(len(sentences), max_sentences, opts.get("seed", 1), held)
    start = time.perf_counter()
    sample, sample_links = [sentences[i] for i in keep], [links[i] for i in keep]
    trained, info = BTGPreorderer.train(sample, sample_links, BTGOptions(**opts))
    return _save_trained(trained, info, len(sentences), held, len(keep), start, model, stats)


def btg_apply_step(
    models: Sequence[Path],
    tok: Path,
    conllu: Path,
    classes: Path,
    output: Path,
    pos_tagset: str,
    threads: int | None = None,
) -> dict:
    """Preorder a split with one model, or sentence i with fold model i % K of K."""
    from wordorder.preorder.btg import BTGPreorderer

    loaded = [BTGPreorderer.load(m) for m in models]
    check_models([m.fold for m in loaded], models)
    sentences = _btg_inputs(tok, conllu, classes, pos_tagset)
    start = time.perf_counter()
    perms = apply_by_fold(
        len(sentences),
        loaded,
        lambda m, ids: m.preorder([sentences[i] for i in ids], threads=threads),
    )
    seconds = time.perf_counter() - start
    write_permutations(output, perms)
    return {
        "sentences": len(perms),
        "models": len(loaded),
        "seconds": round(seconds, 2),
        "sentences_per_second": round(len(perms) / max(seconds, 1e-9), 1),
    }


def _rvnn_inputs(tok: Path, conllu: Path, trees: Path) -> tuple[list, list, list]:
    tokens = read_tokens(tok)
    return tokens, read_pos(conllu, tokens, "upos"), read_trees(trees, tokens)


def rvnn_train_step(
    tok: Path,
    conllu: Path,
    trees: Path,
    align: Path,
    model: Path,
    stats: Path,
    options: dict,
    fold: int | None = None,
    folds: int | None = None,
) -> dict:
    """Train the RvNN model on the training split, or (``fold``, ``folds``) on all but one fold."""
    from wordorder.preorder.rvnn import RvNNOptions, train_rvnn

    opts = dict(options)
    max_sentences = opts.pop("max_sentences", None)
    words, pos, tree_list = _rvnn_inputs(tok, conllu, trees)
    held = check_fold(fold, folds, len(words), "rvnn")
    links = read_links(align, words)
    sample = train_sample(len(words), max_sentences, opts.get("seed", 1), held)
    keep = [i for i in sample if tree_list[i] is not None]
    start = time.perf_counter()
    trained, info = train_rvnn(
        [words[i] for i in keep],
        [pos[i] for i in keep],
        [tree_list[i] for i in keep],
        [links[i] for i in keep],
        RvNNOptions(**opts),
    )
    return _save_trained(trained, info, len(words), held, len(keep), start, model, stats)


def rvnn_apply_step(
    models: Sequence[Path],
    tok: Path,
    conllu: Path,
    trees: Path,
    output: Path,
) -> dict:
    """Preorder a split with one model, or sentence i with fold model i % K of K; a sentence
    without a tree (an empty line) keeps the identity."""
    from wordorder.preorder.rvnn import RvNNPreorderer

    loaded = [RvNNPreorderer.load(m) for m in models]
    check_models([m.fold for m in loaded], models)
    words, pos, tree_list = _rvnn_inputs(tok, conllu, trees)
    start = time.perf_counter()

    def apply(m: RvNNPreorderer, ids: np.ndarray) -> list[np.ndarray]:
        out = [np.arange(len(words[i]), dtype=np.int64) for i in ids]
        todo = [j for j, i in enumerate(ids) if tree_list[i] is not None]
        chosen = [ids[j] for j in todo]
        some_words, some_pos = [words[i] for i in chosen], [pos[i] for i in chosen]
        found = m.preorder(some_words, some_pos, [tree_list[i] for i in chosen])
        for j, perm in zip(todo, found):
            out[j] = perm
        return out

    perms = apply_by_fold(len(words), loaded, apply)
    seconds = time.perf_counter() - start
    write_permutations(output, perms)
    todo = sum(t is not None for t in tree_list)
    return {
        "sentences": len(perms),
        "models": len(loaded),
        "seconds": round(seconds, 2),
        "sentences_per_second": round(todo / max(seconds, 1e-9), 1),
    }


def _save_trained(
    trained,
    info: dict,
    n: int,
    held: Fold | None,
    sampled: int,
    start: float,
    model: Path,
    stats: Path,
) -> dict:
    """Saves a trained preorderer (with its held-out fold) and its statistics; returns them."""
    info = {
        "corpus_sentences": n,
        **fold_info(n, held),
        "sampled": sampled,
        **info,
        "train_seconds": round(time.perf_counter() - start, 2),
    }
    trained.fold = held
    trained.save(model)
    write_json(stats, info)
    return info
