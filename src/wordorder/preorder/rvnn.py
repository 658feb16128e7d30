"""Recursive-NN preordering (Kawara, Chu, Arase 2018; Kawara et al. 2021): training. The trained
model (options, vocabularies, applying it, its file) is :mod:`wordorder.preorder.rvnn_model`,
re-exported here.

The model labels every node of a binary source tree (``wordorder.syntax.binarize``) as STRAIGHT
or INVERTED. It is trained on the τ oracle labels of :mod:`wordorder.preorder.rvnn_oracle`.
Reading the labels bottom-up gives a permutation with ``reordered[k] = src[perm[k]]``. Settings
follow the paper (§V.B): 5 epochs, 500 trees per batch, vocabulary 50k, word and POS embeddings
of 200. The optimiser follows the reference code: Adam, with L2 weight decay 1e-4 added to the
gradient before its norm is clipped at 5 (the order of its chainer hooks). The loss is the sum
of node cross-entropies per tree, averaged over the trees.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from wordorder.errors import WordorderError
from wordorder.preorder.rvnn_model import (
    FORMAT,
    UNK,
    RvNNOptions,
    RvNNPreorderer,
    build_vocab,
    check_lengths,
)
from wordorder.preorder.rvnn_net import RvNNNet, collate, ranges
from wordorder.preorder.rvnn_oracle import flatten_trees, oracle_labels_corpus, pack_links
from wordorder.progress import progress
from wordorder.syntax.binarize import Tree

__all__ = ["FORMAT", "UNK", "RvNNOptions", "RvNNPreorderer", "build_vocab", "train_rvnn"]


def train_rvnn(
    words: list[list[str]],
    pos: list[list[str]],
    trees: list[Tree | None],
    links: list[np.ndarray],
    options: RvNNOptions,
    progress_bar: bool = True,
    *,
    tree_path: str | Path | None = None,
    align_path: str | Path | None = None,
) -> tuple[RvNNPreorderer, dict]:
    """Train an RvNN preorderer on oracle labels.

    Args:
        words, pos: tokens and their UPOS tags, one list per sentence.
        trees: binary trees over the tokens (``None`` for an empty sentence).
        links: [L, 2] (source i, target j) alignment links per sentence.
        tree_path, align_path: files named in input errors.

    Returns:
        The preorderer and statistics: sentences, used, skipped {reason: count}, nodes, the share
        of INVERTED oracle labels, vocabulary sizes, and per epoch the mean tree loss, the label
        accuracy on the training batches as they were seen, and seconds.

    Raises:
        WordorderError: misaligned inputs, a tree that does not fit its sentence, a link outside
            it, or no usable sentence. Empty, one-word and unaligned
            sentences are skipped and counted.
    """
    lengths = check_lengths(words, pos, trees, tree_path)
    flat = flatten_trees(trees, lengths, tree_path)
    packed = pack_links(links, lengths, align_path)
    n, n_links = flat.n, packed.counts()
    skipped = {
        "empty": int((n == 0).sum()),
        "one_word": int((n == 1).sum()),
        "no_links": int(((n >= 2) & (n_links == 0)).sum()),
    }
    used = np.flatnonzero((n >= 2) & (n_links > 0))
    if not len(used):
        raise WordorderError(
            f"no sentence to train the RvNN preorderer on (skipped: {skipped})",
            path=align_path,
            hint="check the alignments and trees of the training corpus",
        )
    labels = oracle_labels_corpus(flat, packed)
    # Vocabularies from the sentences trained on only: other words would keep random embeddings.
    word_vocab = build_vocab([words[i] for i in used], options.vocab_size, lower=True)
    pos_vocab = build_vocab([pos[i] for i in used], 10**9, lower=False)
    torch.manual_seed(options.seed)
    model = RvNNPreorderer(
        RvNNNet(len(word_vocab), len(pos_vocab), options.embed, options.hidden),
        word_vocab,
        pos_vocab,
        options,
    )
    net = model.net
    word_ids, pos_ids, offsets = model.encode(words, pos)
    params = list(net.parameters())
    opt = torch.optim.Adam(params, lr=options.lr)  # L2 decay is added to the gradients by hand
    rng = np.random.default_rng(options.seed)
    bs = max(options.batch_size, 1)
    steps = -(-len(used) // bs)
    bar = progress(
        desc="rvnn train", unit=" batch", total=steps * options.epochs, enabled=progress_bar
    )
    epochs = []
    for epoch in range(1, options.epochs + 1):
        start, total_loss, correct, nodes = time.perf_counter(), 0.0, 0, 0
        net.train()
        order = rng.permutation(used)
        for k in range(steps):
            batch = collate(
                flat, word_ids, pos_ids, offsets, order[k * bs : (k + 1) * bs], model.device
            )
            gold = torch.from_numpy(labels[batch.rows].astype(np.int64)).to(model.device)
            logits = net(batch)
            loss = F.cross_entropy(logits, gold, reduction="sum") / batch.n_trees
            opt.zero_grad(set_to_none=True)
            loss.backward()
            # the reference's chainer hooks: L2 decay first, then clip the norm
            with torch.no_grad():
                for p in params:
                    if p.grad is not None:
                        p.grad.add_(p, alpha=options.weight_decay)
            if options.clip > 0:
                torch.nn.utils.clip_grad_norm_(params, options.clip)
            opt.step()
            total_loss += loss.item() * batch.n_trees
            correct += int((logits.argmax(-1) == gold).sum())
            nodes += len(gold)
            bar.update(1)
            bar.set_postfix(epoch=epoch, loss=f"{loss.item():.3f}", refresh=False)
        epochs.append(
            {
                "epoch": epoch,
                "loss": total_loss / len(used),
                "label_accuracy": correct / max(nodes, 1),
                "seconds": round(time.perf_counter() - start, 3),
            }
        )
    bar.close()
    used_nodes = ranges(flat.node_offsets[used], n[used] - 1)
    unk = float(np.mean(word_ids[ranges(offsets[used], n[used])] == 0))
    stats = {
        "sentences": len(words),
        "used": len(used),
        "skipped": skipped,
        "nodes": len(used_nodes),
        "label_share_inverted": float(labels[used_nodes].mean()),
        "vocab_words": len(model.words),
        "vocab_pos": len(model.pos),
        "unk_token_share": unk,
        "device": str(model.device),
        "epochs": epochs,
    }
    return model, stats
