"""A CUDA graph captures an update only if it never reads the device (``train.cuda_graphs``).
Counted on the CPU through CUDA's code paths (:mod:`wordorder.train.opcount`), no Transformer or
RNN variant's update does (and each one's ``capture_blocker`` flag agrees); and the sync-free
CUDA paths (unpacked GRUs, RNMT's masked batch norm, the source trees' fixed-size tables and
ancestors by repeated squaring) compute what the CPU's paths compute."""

from __future__ import annotations

import copy

import pytest
import torch
from reordering_task import VOCAB, make_data
from test_rnn_variants_learn_reordering import VARIANTS as RNN_VARIANTS
from test_rnn_variants_learn_reordering import features as rnn_features
from test_variants_learn_reordering import SIZES
from test_variants_learn_reordering import VARIANTS as TRANSFORMER_VARIANTS
from test_variants_learn_reordering import features as transformer_features

from wordorder.device import cuda_paths
from wordorder.model_io.batching import collate
from wordorder.models import build_model
from wordorder.models.relation import RelationLayer
from wordorder.models.rnn_encoder import run_gru
from wordorder.train.opcount import count_update

TINY = {"preset": "tiny", "feature_sizes": SIZES}
MODELS = {
    "transformer-baseline": {"preset": "tiny"},
    **{f"transformer-{k}": {**TINY, **v} for k, v in TRANSFORMER_VARIANTS.items()},
    "rnn-plain": {"preset": "rnn_tiny"},
    **{f"rnn-{k}": {"preset": "rnn_tiny", **v} for k, v in RNN_VARIANTS.items()},
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_capture_flag_matches_the_host_syncs_of_an_update(name):
    pairs = make_data(12, 2, seed=3)[0]
    srcs, tgts = [s for s, _ in pairs], [t for _, t in pairs]
    torch.manual_seed(1)
    model = build_model(MODELS[name], VOCAB).train()
    if name.startswith("transformer"):
        needed = model.options.required_features()
        feats = {k: v for k, v in transformer_features(srcs, tgts).items() if k in needed}
    else:
        feats = rnn_features(srcs) if model.options.syntax_tree() else {}
    syncs = count_update(model, collate(pairs, feats=feats or None), torch.bfloat16).syncs
    assert (syncs == 0) == (model.capture_blocker is None), (name, syncs, model.capture_blocker)
    assert syncs == 0, f"{name}: {syncs} host syncs an update on CUDA: CUDA graphs cannot run it"


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bi", "uni"])
def test_unpacked_gru_equals_the_packed_one(bidirectional):
    """On CUDA the GRUs run over the padded batch (packing reads the lengths on the host); the
    outputs and gradients equal the CPU's packed run, an empty row included."""
    torch.manual_seed(0)
    gru = torch.nn.GRU(5, 4, batch_first=True, bidirectional=bidirectional)
    x = torch.randn(4, 7, 5, requires_grad=True)
    length = torch.tensor([7, 3, 0, 5])
    results = []
    for paths in (False, True):
        x.grad = None
        gru.zero_grad()
        if paths:
            with cuda_paths():
                out = run_gru(gru, x, length)
        else:
            out = run_gru(gru, x, length)
        (out * torch.linspace(-1, 1, out.numel()).view(out.shape)).sum().backward()
        results.append((out.detach(), x.grad.clone(), [p.grad.clone() for p in gru.parameters()]))
    (a, ga, wa), (b, gb, wb) = results
    torch.testing.assert_close(b, a, rtol=0, atol=1e-6)
    assert b[2].abs().max() == 0 and b[1, 3:].abs().max() == 0  # zero at padding
    torch.testing.assert_close(gb, ga, rtol=0, atol=1e-6)
    for p, q in zip(wa, wb):
        torch.testing.assert_close(q, p, rtol=0, atol=1e-5)


def test_masked_batch_norm_equals_batch_norm_of_the_valid_rows():
    """RNMT's relation layer normalises the valid rows only: on CUDA by masked sums (a boolean
    index would read its size on the host). Outputs, gradients and running statistics over three
    training updates, then the eval-mode output, equal the CPU's selection of those rows."""
    torch.manual_seed(0)
    layer = RelationLayer(6, channels=((1, 4), (3, 5)), gp_hidden=8, gp_layers=2, chunk=4)
    other = copy.deepcopy(layer)
    x = torch.randn(3, 7, 6)
    pad = torch.tensor([[0] * 7, [0] * 4 + [1] * 3, [0] * 2 + [1] * 5], dtype=torch.bool)
    for _ in range(3):
        layer.zero_grad()
        other.zero_grad()
        a = layer(x, pad)
        a.square().sum().backward()
        with cuda_paths():
            b = other(x, pad)
        b.square().sum().backward()
        torch.testing.assert_close(b, a, rtol=0, atol=1e-6)
        for p, q in zip(layer.parameters(), other.parameters()):
            torch.testing.assert_close(q.grad, p.grad, rtol=1e-5, atol=1e-5)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(other.norm, name), getattr(layer.norm, name))
    layer.eval(), other.eval()
    with cuda_paths():
        b = other(x, pad)
    torch.testing.assert_close(b, layer(x, pad), rtol=0, atol=1e-6)


def test_source_trees_on_cuda_paths_equal_the_cpus():
    """SDAtt's subword distances and Chen 2017's subword parents: a word table as wide as the
    batch and the ancestors by repeated squaring (no value read back) give the CPU's results,
    on random trees (every head an earlier-rooted word, so no cycles), pieces and padding."""
    from wordorder.models.source_tree import subword_distances, subword_parents

    g = torch.Generator().manual_seed(11)
    b, s = 9, 23
    word = torch.zeros(b, s, dtype=torch.long)
    head = torch.zeros(b, s, dtype=torch.long)
    valid = torch.zeros(b, s, dtype=torch.bool)
    for r in range(b):
        n_words = int(torch.randint(1, 12, (1,), generator=g))
        pieces = torch.randint(1, 3, (n_words,), generator=g)
        root = int(torch.randint(0, n_words, (1,), generator=g))
        order = [root] + [w for w in torch.randperm(n_words, generator=g).tolist() if w != root]
        heads = [0] * n_words
        for k, w in enumerate(order[1:], start=1):  # each word under one placed before it
            heads[w] = order[int(torch.randint(0, k, (1,), generator=g))] + 1
        rows = [(w, heads[w]) for w in range(n_words) for _ in range(int(pieces[w]))]
        rows = rows[: s - 1] + [(rows[min(len(rows), s - 1) - 1][0] + 1, 0)]  # the EOS word
        for t, (w, h) in enumerate(rows):
            word[r, t], head[r, t], valid[r, t] = w, h, True
    cpu = subword_distances(word, head, valid), subword_parents(word, head, valid)
    with cuda_paths():
        free = subword_distances(word, head, valid), subword_parents(word, head, valid)
    assert torch.equal(free[0], cpu[0]) and torch.equal(free[1], cpu[1])
