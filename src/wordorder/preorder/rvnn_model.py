"""A trained recursive-NN preorderer (Kawara, Chu, Arase 2018; Kawara et al. 2021): its options,
vocabularies, applying it to a corpus, and its file. Training is :mod:`wordorder.preorder.rvnn`
(which re-exports everything here).

Words are lowercased. The vocabulary keeps the ``vocab_size`` most frequent words; ties are broken
by first occurrence, and id 0 is ``<unk>``. The reference code fills its vocabulary in first-seen
order. That is a quirk we do not reproduce. POS tags are UPOS, with an ``<unk>`` as well.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch

from wordorder.device import resolve_device
from wordorder.errors import WordorderError
from wordorder.io import save_torch
from wordorder.preorder.rvnn_net import RvNNNet, collate
from wordorder.preorder.rvnn_oracle import TreeArrays, apply_labels_corpus, flatten_trees
from wordorder.progress import progress
from wordorder.syntax.binarize import Tree

UNK = "<unk>"
FORMAT = "wordorder-rvnn"


@dataclass
class RvNNOptions:
    """Training settings (paper §V.B and the reference code's optimiser)."""

    epochs: int = 5
    batch_size: int = 500  # trees per update
    vocab_size: int = 50000  # words kept, <unk> included
    embed: int = 200  # word and POS embedding size, each
    hidden: int = 200  # node vector size λ
    lr: float = 1e-3
    weight_decay: float = 1e-4
    clip: float = 5.0  # gradient-norm clipping; 0 turns it off
    seed: int = 1
    device: str = "auto"


def build_vocab(sentences: Sequence[Sequence[str]], size: int, lower: bool) -> list[str]:
    """``[<unk>, most frequent ...]``, at most ``size`` entries; ties keep first-seen order."""
    counts = Counter(w.lower() if lower else w for sent in sentences for w in sent)
    counts.pop(UNK, None)
    ranked = sorted(counts, key=counts.__getitem__, reverse=True)  # stable: first seen wins ties
    return [UNK, *ranked[: max(size - 1, 0)]]


def _encode(sentences: Sequence[Sequence[str]], index: dict[str, int], lower: bool) -> np.ndarray:
    """[sum n] int64 ids of all tokens; unknown tokens get 0 (``<unk>``)."""
    get = index.get
    return np.fromiter(
        (get(w.lower() if lower else w, 0) for sent in sentences for w in sent), dtype=np.int64
    )


def check_lengths(
    words: Sequence[Sequence[str]],
    pos: Sequence[Sequence[str]],
    trees: Sequence,
    tree_path: str | Path | None,
) -> list[int]:
    """The words per sentence, after checking that tokens, POS tags and trees are line-aligned."""
    if len(pos) != len(words) or len(trees) != len(words):
        raise WordorderError(
            f"{len(words)} sentences, {len(pos)} POS lines and {len(trees)} trees",
            hint="the tokens, parses and trees must be line-aligned",
        )
    lengths = [len(w) for w in words]
    for t, (w, p) in enumerate(zip(words, pos)):
        if len(p) != len(w):
            raise WordorderError(
                f"{len(p)} POS tags for {len(w)} words",
                line=t + 1,
                hint="the parse must use the pipeline's own tokens",
            )
    return lengths


class RvNNPreorderer:
    """A trained RvNN preorderer: the network, its vocabularies and the
    options it was trained with."""

    def __init__(
        self,
        net: RvNNNet,
        words: list[str],
        pos: list[str],
        options: RvNNOptions,
        device: str | None = None,
    ) -> None:
        self.device = resolve_device(device or options.device)
        self.net = net.to(self.device)
        self.words, self.pos, self.options = words, pos, options
        self.fold: tuple[int, int] | None = None  # (k, K): trained without cross-fit fold k of K
        self._word_index = {w: i for i, w in enumerate(words)}
        self._pos_index = {p: i for i, p in enumerate(pos)}

    def encode(
        self, words: Sequence[Sequence[str]], pos: Sequence[Sequence[str]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flat word ids, POS ids and [T+1] token offsets of a corpus."""
        offsets = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum([len(w) for w in words], out=offsets[1:])
        return _encode(words, self._word_index, True), _encode(pos, self._pos_index, False), offsets

    @torch.inference_mode()
    def predict_labels(
        self,
        words: Sequence[Sequence[str]],
        pos: Sequence[Sequence[str]],
        trees: Sequence[Tree | None],
        batch_size: int = 500,
        progress_bar: bool = True,
        tree_path: str | Path | None = None,
    ) -> tuple[TreeArrays, np.ndarray]:
        """The flat trees and the predicted label of every internal node ([N] int8, their rows)."""
        lengths = check_lengths(words, pos, trees, tree_path)
        flat = flatten_trees(trees, lengths, tree_path)
        word_ids, pos_ids, offsets = self.encode(words, pos)
        labels = np.zeros(len(flat.spans), dtype=np.int8)
        todo = np.flatnonzero(flat.n >= 2)
        # Batches of trees of similar height waste no levels: sort by the root's height.
        todo = todo[np.argsort(flat.height[flat.node_offsets[todo + 1] - 1], kind="stable")]
        self.net.eval()
        bar = progress(desc="rvnn preorder", unit=" sent", total=len(todo), enabled=progress_bar)
        bs = max(batch_size, 1)
        for start in range(0, len(todo), bs):
            select = todo[start : start + bs]
            batch = collate(flat, word_ids, pos_ids, offsets, select, self.device)
            labels[batch.rows] = self.net(batch).argmax(-1).to(torch.int8).cpu().numpy()
            bar.update(len(select))
        bar.close()
        return flat, labels

    def preorder(
        self,
        words: Sequence[Sequence[str]],
        pos: Sequence[Sequence[str]],
        trees: Sequence[Tree | None],
        batch_size: int = 500,
        progress_bar: bool = True,
        tree_path: str | Path | None = None,
    ) -> list[np.ndarray]:
        """One permutation per sentence (``None`` tree = empty sentence; a
        one-word one gives [0])."""
        flat, labels = self.predict_labels(words, pos, trees, batch_size, progress_bar, tree_path)
        return apply_labels_corpus(flat, labels)

    def save(self, path: str | Path) -> None:
        """Write the model atomically (a torch file readable with ``weights_only=True``)."""
        state = {k: v.detach().cpu() for k, v in self.net.state_dict().items()}
        data = {
            "format": FORMAT,
            "version": 1,
            "options": asdict(self.options),
            "words": list(self.words),
            "pos": list(self.pos),
            "state": state,
        }
        if self.fold is not None:  # a full model's file stays as before cross-fitting
            data["fold"] = list(self.fold)
        save_torch(data, path)

    @classmethod
    def load(cls, path: str | Path, device: str | None = None) -> RvNNPreorderer:
        """Read a model written by :meth:`save`; ``device`` overrides the saved option.

        Raises:
            WordorderError: the file is missing, unreadable or not an RvNN model.
        """
        hint = "retrain it with `wordorder` (the rvnn_train step)"
        if not Path(path).is_file():
            raise WordorderError("RvNN model file not found", path=path, hint=hint)
        try:
            data = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # torch raises many types for a corrupt or foreign file
            raise WordorderError(
                f"cannot read the RvNN model ({type(e).__name__}: {e})".splitlines()[0],
                path=path,
                hint=hint,
            ) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != 1:
            raise WordorderError(
                "not an RvNN preordering model (format wordorder-rvnn, version 1)",
                path=path,
                hint=hint,
            )
        try:
            known = {f.name for f in fields(RvNNOptions)}
            options = RvNNOptions(**{k: v for k, v in data["options"].items() if k in known})
            words, pos, state = list(data["words"]), list(data["pos"]), data["state"]
            net = RvNNNet(len(words), len(pos), options.embed, options.hidden)
            net.load_state_dict(state)
            fold = [int(x) for x in data["fold"]] if "fold" in data else None
        except (KeyError, TypeError, RuntimeError, AttributeError, ValueError) as e:
            raise WordorderError(
                f"the RvNN model is incomplete or inconsistent ({e})".splitlines()[0],
                path=path,
                hint=hint,
            ) from None
        model = cls(net, words, pos, options, device)
        if fold is not None:
            model.fold = (fold[0], fold[1])
        return model
