"""AER of the alignments a translation model's attention implies
(docs/algorithms.md §AER-ATTENTION).

The gold set's sentence pairs are force-decoded (teacher forcing on the reference): row t of
the model's attention (``Seq2SeqModel.attention_weights``) is the step that predicts target
subword t. Subwords are mapped to the gold's words by method (b) (aggregate first): a target
word's row is the mean of its subwords' rows, a source word's column the sum of its subwords'
columns (the source EOS column is left out), and each target word links to the source word
of largest weight — one link per target word, so precision and recall differ in meaning from
an aligner's. Each gold word is encoded on its own by the model's subword vocabulary, so the
word boundaries are exactly the gold's whatever the pipeline's own tokenizer does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from wordorder.align.aer import aer, read_gold, read_src_tgt
from wordorder.errors import WordorderError
from wordorder.model_io.batching import pad
from wordorder.models.base import Seq2SeqModel
from wordorder.specials import BOS_ID, EOS_ID
from wordorder.text.subword import SubwordModel


def encode_words(sp: SubwordModel, words: Sequence[str]) -> tuple[list[int], list[int]]:
    """Subword ids of a word sequence and the word index of each id. A gold token the
    vocabulary cannot take (whitespace only, e.g. an ideographic space) gets no subwords."""
    ids: list[int] = []
    owner: list[int] = []
    for k, word in enumerate(words):
        word = word.strip()
        if not word or any(ch.isspace() for ch in word):
            continue
        pieces = sp.encode_ids([word.replace("\u2581", "_")])
        ids += pieces
        owner += [k] * len(pieces)
    return ids, owner


def word_links(weights: np.ndarray, src_word: Sequence[int], tgt_word: Sequence[int]) -> np.ndarray:
    """Method (b): [T, S] subword attention (rows target, columns source, no EOS) → [L, 2]
    links (source word, target word), one per target word that has subwords.

    >>> word_links(np.array([[.3, .3, .4], [.1, .1, .8]]), [0, 0, 1], [0, 1]).tolist()
    [[0, 0], [1, 1]]
    """
    if weights.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    src, tgt = np.asarray(src_word), np.asarray(tgt_word)
    n_src, n_tgt = src.max() + 1, tgt.max() + 1
    rows = np.zeros((n_tgt, weights.shape[1]))
    np.add.at(rows, tgt, weights)
    counts = np.bincount(tgt, minlength=n_tgt)
    rows /= np.maximum(counts, 1)[:, None]  # mean over a target word's subwords
    cols = np.zeros((n_tgt, n_src))
    np.add.at(cols.T, src, rows.T)  # sum over a source word's subwords
    has = counts > 0
    return np.stack([cols.argmax(axis=1)[has], np.arange(n_tgt)[has]], axis=1).astype(np.int64)


@torch.inference_mode()
def attention_alignments(
    model: Seq2SeqModel,
    sources: Sequence[tuple[list[int], list[int]]],
    targets: Sequence[tuple[list[int], list[int]]],
    batch_size: int = 32,
    progress: bool = False,
) -> list[np.ndarray]:
    """Word links of every sentence pair; ``sources``/``targets``: (ids, word of each id)."""
    from wordorder.progress import progress as bar

    if model.options.required_features():
        raise WordorderError(
            f"this model reads the source features {sorted(model.options.required_features())}",
            hint="attention AER is computed for systems that read only the source subwords",
        )
    model.eval()
    device = model.device
    out: list[np.ndarray] = [np.zeros((0, 2), dtype=np.int64)] * len(sources)
    order = sorted(range(len(sources)), key=lambda i: -len(sources[i][0]))
    for start in bar(
        range(0, len(order), batch_size), desc="forced decoding", unit=" batch", enabled=progress
    ):
        batch = [i for i in order[start : start + batch_size] if sources[i][0] and targets[i][0]]
        if not batch:
            continue
        src = pad([sources[i][0] + [EOS_ID] for i in batch]).to(device)
        tgt_in = pad([[BOS_ID] + targets[i][0] for i in batch]).to(device)
        att = model.attention_weights(src, tgt_in).float().cpu().numpy()  # (B, T, S)
        for row, i in enumerate(batch):
            n, m = len(sources[i][0]), len(targets[i][0])
            # rows 0..m-1 predict the target subwords (row m predicts EOS); columns 0..n-1
            # are the source subwords (column n is EOS, the rest padding)
            out[i] = word_links(att[row, :m, :n], sources[i][1], targets[i][1])
    return out


def evaluate_attention_aer(
    model: Seq2SeqModel,
    sp: SubwordModel,
    gold_pairs: str | Path,
    gold_links: str | Path,
    swap: bool = False,
    batch_size: int = 32,
    progress: bool = False,
    sp_tgt: SubwordModel | None = None,
) -> tuple[dict, list[np.ndarray]]:
    """AER of ``model``'s attention on a gold set (awesome-align files; ``swap``: the files'
    sides are target ||| source of the model). ``sp`` encodes the source words (and the
    target words too, unless ``sp_tgt`` gives the target side its own subword model).
    Returns the AER dict and the links."""
    src_words, tgt_words = read_src_tgt(gold_pairs)
    gold = read_gold(gold_links, [len(s) for s in src_words], [len(t) for t in tgt_words])
    sure, possible = gold.sure, gold.possible
    if swap:
        src_words, tgt_words = tgt_words, src_words
        sure, possible = [g[:, ::-1].copy() for g in sure], [g[:, ::-1].copy() for g in possible]
    sources = [encode_words(sp, s) for s in src_words]
    targets = [encode_words(sp if sp_tgt is None else sp_tgt, t) for t in tgt_words]
    links = attention_alignments(model, sources, targets, batch_size, progress)
    scores = aer(links, sure, possible)  # aer() adds the sure links to the possible ones
    scores["gold_links_dropped"] = gold.out_of_range_links
    return scores, links


def aer_table(results: Sequence[Path], aligners: Sequence[Path]) -> tuple[list[dict], str]:
    """Rows and Markdown of the AER table: the attention of each system (``results``: JSON files
    of :func:`evaluate_attention_aer` with their meta) and the pair's word aligner
    (``aligners``: ``data/<pair>/align/stats.json`` files, whose ``aer`` entry scores the
    aligner on the same gold set)."""
    import json

    rows = []
    for path in aligners:
        stats = json.loads(Path(path).read_text(encoding="utf-8"))
        gold = stats.get("aer")
        if gold:
            rows.append(
                {
                    "pair": Path(path).parent.parent.name,
                    "system": "eflomal (word aligner)",
                    "seed": "",
                    "precision": gold["precision"],
                    "recall": gold["recall"],
                    "aer": gold["aer"],
                }
            )
    for path in results:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        meta = data["meta"]
        rows.append(
            {
                "pair": meta["pair"],
                "system": f"{meta['variant']} (attention)",
                "seed": meta["seed"],
                "precision": data["precision"],
                "recall": data["recall"],
                "aer": data["aer"],
            }
        )
    lines = [
        "# Alignment error rate on the gold alignments (lower is better)",
        "",
        "Attention: forced decoding of the gold pairs, subwords mapped to words by mean "
        "target rows and summed source columns (docs/algorithms.md §AER-ATTENTION, method b), "
        "one link per target word.",
        "",
        "| pair | system | seed | precision | recall | AER |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['pair']} | {r['system']} | {r['seed']} | {100 * r['precision']:.1f} | "
            f"{100 * r['recall']:.1f} | {100 * r['aer']:.1f} |"
        )
    return rows, "\n".join(lines) + "\n"
