"""The beam search of static shapes (``decode.cuda_graphs``, :mod:`wordorder.decode.static_beam`)
finds what the default search finds, for every Transformer and RNN variant (but flexible
attention, which keeps the default search), and its step never reads the device (a CUDA graph
could not capture it otherwise). The graph itself runs in ``tests/system/test_cuda.py``."""

from __future__ import annotations

import pytest
import torch
from graph_standin import ReplayedCalls
from reordering_task import VOCAB, make_data
from test_rnn_variants_learn_reordering import VARIANTS as RNN_VARIANTS
from test_rnn_variants_learn_reordering import features as rnn_features
from test_variants_learn_reordering import SIZES, features
from test_variants_learn_reordering import VARIANTS as TRANSFORMER_VARIANTS

from wordorder import gpu_table
from wordorder.decode.batches import length_batches, translate_batches
from wordorder.decode.beam import beam_search_hypotheses, max_lengths
from wordorder.decode.graph_buckets import Buckets
from wordorder.decode.options import DecodeOptions
from wordorder.decode.static_beam import (
    SearchState,
    search_step,
    static_beam_search_hypotheses,
    use_decode_graphs,
)
from wordorder.device import cuda_paths
from wordorder.errors import WordorderError
from wordorder.model_io.batching import pad_feature
from wordorder.models import build_model
from wordorder.specials import EOS_ID, PAD_ID
from wordorder.train.opcount import count_ops

MODELS = {
    "baseline": {"preset": "tiny"},
    "pre_norm": {"preset": "tiny", "norm": "pre"},
    "relative_decoder": {"preset": "tiny", "relative_k": 3, "relative_sides": "decoder"},
    "untied": {"preset": "tiny", "tie_embeddings": False, "tie_output": False},
    **{k: {"preset": "tiny", "feature_sizes": SIZES, **v} for k, v in TRANSFORMER_VARIANTS.items()},
    "rnn-plain": {"preset": "rnn_tiny"},
    # flexible attention decodes with the default search (its vision span is counted on the host)
    **{
        f"rnn-{k}": {"preset": "rnn_tiny", **v}
        for k, v in RNN_VARIANTS.items()
        if "flexible" not in k
    },
}
SEARCHES = [  # beam size, length penalty, n-best, max_len_a, max_len_b
    (5, 1.0, 1, 1.5, 4),
    (4, 0.6, 3, 1.0, 2),
    (3, 0.0, 2, 1.5, 4),
    (1, 1.0, 1, 1.0, 3),
]


# The EOS calibration of each model of MODELS (calibrate_eos: 36 beam searches a model, run
# once and kept as data; `python tests/system/test_static_beam.py` prints them anew).
EOS_CHOICES = {
    "additional_pe": (1.0, 2, 4),
    "baseline": (1.0, 2, 4),
    "both_res": (5.0, 8, 4),
    "disan": (5.0, 2, 8),
    "disreg": (1.0, 2, 4),
    "encoder_res": (1.0, 2, 4),
    "fusing_diverse": (0.5, 2, 8),
    "linguistic_features": (0.0, 2, 4),
    "pre_norm": (2.0, 2, 6),
    "preorder_absolute": (2.0, 8, 4),
    "preorder_relative": (2.0, 8, 4),
    "relative_decoder": (2.0, 2, 6),
    "relative_pe": (3.0, 8, 4),
    "rnn-cgru": (0.5, 8, 4),
    "rnn-chen2017": (2.0, 2, 4),
    "rnn-double_chen2017": (0.0, 2, 6),
    "rnn-double_local": (0.5, 2, 6),
    "rnn-double_sdatt": (1.0, 2, 6),
    "rnn-local": (3.0, 2, 8),
    "rnn-plain": (0.5, 8, 4),
    "rnn-rnmt": (3.0, 2, 6),
    "rnn-rnnsearch": (0.5, 2, 4),
    "rnn-sdatt": (5.0, 8, 6),
    "untied": (2.0, 2, 4),
}


def test_every_model_has_its_calibration():
    assert set(EOS_CHOICES) == set(MODELS)


def random_transformer(seed=0):
    torch.manual_seed(seed)
    return build_model({"preset": "tiny"}, 30).eval()


def random_sources(n, seed=3):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randint(4, 30, (int(torch.randint(1, 12, (1,), generator=g)),), generator=g).tolist()
        for _ in range(n)
    ]


def padded(sources):
    width = max(len(s) for s in sources) + 1
    src = torch.full((len(sources), width), PAD_ID)
    for i, s in enumerate(sources):
        src[i, : len(s) + 1] = torch.tensor(s + [EOS_ID])
    return src


def set_eos(model, choice):
    """Give ``model`` an EOS logit that makes hypotheses end at many lengths (an untrained
    model runs every beam to the length limit, which tests no stopping rule): the row's largest
    logit plus a multiple (gain) of the gap between tokens a and a + 1's logits, minus an offset
    (in standard deviations of the row's logits); ``choice`` = (offset, gain, a)."""
    offset, gain, a = choice
    plain = type(model)._logits.__get__(model)

    def logits(h):
        x = plain(h)
        eos = x.amax(-1) + gain * (x[..., a] - x[..., a + 1]) - offset * x.std(-1)
        return torch.cat([x[..., :EOS_ID], eos[..., None], x[..., EOS_ID + 1 :]], -1)

    model._logits = logits
    return model


def calibrate_eos(model, src, feats=None):
    """The (offset, gain, a) giving the most lengths below the limits in a beam-5 search (36
    searches: EOS_CHOICES keeps the result per model of MODELS; see eos_prone)."""
    limits = set(max_lengths(src, 1.5, 4).tolist())
    choices = [(o, g, a) for o in (0.0, 0.5, 1.0, 2.0, 3.0, 5.0) for g in (2, 8) for a in (4, 6, 8)]
    scores = []
    for choice in choices:
        found = beam_search_hypotheses(set_eos(model, choice), src, 5, 1.5, 4, 1.0, 1, feats)
        scores.append(len({len(s[0].tokens) for s in found if s} - limits))
    return choices[scores.index(max(scores))]


def eos_prone(model, src, feats=None, name=None):
    """The model with the calibrated EOS logit: for a model of MODELS (by ``name``, built with
    its seed) the stored calibration, else a new one. A stored choice that no longer ends
    hypotheses early fails the test's own check; `python tests/system/test_static_beam.py`
    prints new ones."""
    choice = EOS_CHOICES.get(name) if name else None
    return set_eos(model, choice or calibrate_eos(model, src, feats))


def batch(name, model, n=10):
    pairs = make_data(n, 2, seed=5)[0]
    srcs = [s for s, _ in pairs]
    src = padded(srcs)
    if name.startswith("rnn"):
        found = rnn_features(srcs) if model.options.syntax_tree() else {}
    else:
        needed = model.options.required_features()
        found = {k: v for k, v in features(srcs, [t for _, t in pairs]).items() if k in needed}
    feats = {k: pad_feature(k, v, src.size(1)) for k, v in found.items()}
    return src, feats or None


@pytest.mark.parametrize("name", sorted(MODELS))
def test_static_search_finds_the_default_searchs_hypotheses(name):
    torch.manual_seed(2)
    model = build_model(MODELS[name], VOCAB, 60 if "untied" in name else None).eval()
    assert model.static_decoding
    src, feats = batch(name, model)
    model = eos_prone(model, src, feats, name)
    lengths = set()
    for k, alpha, n_best, a, b in SEARCHES:
        want = beam_search_hypotheses(model, src, k, a, b, alpha, n_best, feats)
        got = static_beam_search_hypotheses(model, src, k, a, b, alpha, n_best, feats)
        assert [[h.tokens for h in s] for s in got] == [[h.tokens for h in s] for s in want]
        for g, w in zip(got, want):
            assert [h.score for h in g] == pytest.approx([h.score for h in w], abs=1e-5)
        lengths |= {len(s[0].tokens) for s in want if s}
    limits = set(max_lengths(src, 1.5, 4).tolist())
    assert len(lengths - limits) >= 2, f"too few hypotheses ended early: {lengths}"


def test_how_often_the_host_checks_changes_nothing():
    src = padded(random_sources(9))
    model = eos_prone(random_transformer(1), src)
    every = [static_beam_search_hypotheses(model, src, 4, check_every=c) for c in (1, 3, 64)]
    assert every[0] == every[1] == every[2]


@pytest.mark.parametrize("preset", ["tiny", "rnn_tiny"])
def test_a_step_reads_nothing_back_from_the_device(preset):
    """The step a graph captures: 0 host syncs, and the same operators at every t (the cache
    and the step number are tensors, so nothing is recompiled or re-sized)."""
    torch.manual_seed(2)
    model, src = build_model({"preset": preset}, 30).eval(), padded(random_sources(6))
    k, steps = 4, 12
    with torch.inference_mode():
        limit = max_lengths(src, 1.5, 4)
        state = model.static_state(model.encode(src), k, steps)
        search = SearchState.start(limit, k, steps)
        counts = []
        with cuda_paths():
            for _ in range(3):
                counts.append(count_ops(lambda: search_step(model, state, search, 1, 1.0)))
    assert [c.syncs for c in counts] == [0, 0, 0], counts[0].summary()
    assert len({tuple(sorted(c.by_op.items())) for c in counts}) == 1
    assert int(state.t) == 3


def test_translate_batches_with_cuda_graphs_translates_alike():
    sources = random_sources(15)
    model = eos_prone(random_transformer(3), padded(sources))
    kw = dict(batch_tokens=40, beam_size=4, max_len_a=1.0, max_len_b=3, progress=False)
    assert translate_batches(model, sources, cuda_graphs=True, **kw) == translate_batches(
        model, sources, **kw
    )


@pytest.mark.parametrize("name", ["preorder_relative", "rnn-sdatt"])
def test_one_graph_per_bucket_replayed_on_its_buffers_translates_alike(name):
    """decode.cuda_graphs' graphs per shape bucket, through the stand-in for CUDA graphs: the
    batches of a bucket (widths rounded up to 4 values per doubling, rows padded with empty
    sentences and their features) replay one captured step after copying their state into its
    buffers; every replay uses the buffers of the first (a re-allocated buffer would be stale
    memory to a real graph), and the translations are the default search's. A Transformer with
    preorder positions and SDAtt's RNN with its source tree: models with source features."""
    torch.manual_seed(2)
    model = build_model(MODELS[name], VOCAB).eval()
    pairs = make_data(30, 2, seed=5)[0]
    sources = [list(s) for s, _ in pairs]
    if name.startswith("rnn"):
        feats = rnn_features(sources)
    else:
        needed = model.options.required_features()
        feats = {k: v for k, v in features(sources, [t for _, t in pairs]).items() if k in needed}
    assert feats
    model = eos_prone(model, padded(sources), name=name)
    kw = dict(batch_tokens=40, beam_size=3, max_len_a=1.5, max_len_b=4, progress=False)
    backend = ReplayedCalls(same_buffers=True)
    graphed = translate_batches(
        model, sources, feats=feats, cuda_graphs=True, graph_backend=backend, **kw
    )
    assert graphed == translate_batches(model, sources, feats=feats, **kw)
    assert len({len(h) for h in graphed}) >= 3
    widths = [Buckets.width(len(s) + 1) for s in sources]
    batches = length_batches(widths, 40)
    buckets = len(Buckets.of(batches, widths, 1.5, 4).rows)
    assert backend.captures == buckets < len(batches)  # one capture per bucket, not per batch
    assert backend.replays > 2 * len(batches)


def test_the_setting_resolves_by_device_family_and_route_table(monkeypatch, capsys):
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    transformer, rnn = random_transformer(), build_model({"preset": "rnn_tiny"}, 30)
    flexible = build_model({"preset": "rnn_tiny", "attention": "flexible"}, 30)
    monkeypatch.setattr(torch, "__version__", gpu_table.PINNED_TORCH + "+cu130")
    monkeypatch.setattr(gpu_table, "PASSED", {})
    assert not use_decode_graphs("auto", cuda, transformer)  # not passed on a GPU: not by auto
    assert "decode-graphed fp32 transformer has not passed" in capsys.readouterr().out
    assert use_decode_graphs(True, cuda, rnn)  # true runs it
    pinned = ("2026-12-01", gpu_table.PINNED_TORCH)
    rows = {("decode-graphed", "fp32", family): pinned for family in ("transformer", "rnn")}
    monkeypatch.setattr(gpu_table, "PASSED", rows)
    assert use_decode_graphs("auto", cuda, transformer)
    assert use_decode_graphs("auto", cuda, rnn)
    assert not use_decode_graphs("auto", cpu, transformer)
    assert not use_decode_graphs("auto", cuda, flexible)
    assert not use_decode_graphs(False, cuda, transformer)
    with pytest.raises(WordorderError, match="CUDA device.*cpu"):
        use_decode_graphs(True, cpu, transformer)
    with pytest.raises(WordorderError, match="RNN.*static shapes.*flexible"):
        use_decode_graphs(True, cuda, flexible)
    with pytest.raises(WordorderError, match="static shapes"):
        static_beam_search_hypotheses(flexible.eval(), padded([[5, 6]]))
    assert DecodeOptions.from_dict({"cuda_graphs": "auto"}).cuda_graphs == "auto"
    with pytest.raises(WordorderError, match="true, false or auto"):
        DecodeOptions.from_dict({"cuda_graphs": 1})


def calibrations():
    """EOS_CHOICES computed anew (run this file: it prints them)."""
    out = {}
    for name in sorted(MODELS):
        torch.manual_seed(2)
        model = build_model(MODELS[name], VOCAB, 60 if "untied" in name else None).eval()
        src, feats = batch(name, model)
        out[name] = calibrate_eos(model, src, feats)
    return out


if __name__ == "__main__":
    print("EOS_CHOICES = {")
    for name, choice in calibrations().items():
        print(f"    {name!r}: {choice!r},")
    print("}")
