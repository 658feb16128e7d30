"""Updates through parameters stacked by shape (:mod:`wordorder.train.stacked`) are the
per-parameter updates, to the bit: for every Transformer and RNN variant in float32, and seven
of them under bf16 autocast, three updates of two micro-batches each (Adam, clipping, dropout)
leave the same losses, gradients and weights. The trainer runs its first update per parameter
and stacks the parameters that update used; here likewise."""

from __future__ import annotations

import copy

import pytest
import torch
from reordering_task import VOCAB, make_data
from test_rnn_variants_learn_reordering import VARIANTS as RNN_VARIANTS
from test_rnn_variants_learn_reordering import features as rnn_features
from test_static_beam import MODELS as SEARCHED_MODELS
from test_variants_learn_reordering import features

from wordorder.gpu_table import tried
from wordorder.model_io.batching import collate
from wordorder.models import build_model
from wordorder.train.options import TrainOptions
from wordorder.train.routes import route_from_options
from wordorder.train.stacked import StackedParameters
from wordorder.train.update import make_optimizer

# the static search's variants, and flexible attention (which decodes with the default search)
MODELS = {
    **SEARCHED_MODELS,
    **{f"rnn-{k}": {"preset": "rnn_tiny", **v} for k, v in RNN_VARIANTS.items() if "flexible" in k},
}


def micro_batches(model, n=36, per_batch=6):
    pairs = make_data(n, 2, seed=7)[0]
    srcs = [s for s, _ in pairs]
    if model.options.family == "rnn":
        feats = rnn_features(srcs) if model.options.syntax_tree() else {}
    else:
        needed = model.options.required_features()
        found = features(srcs, [t for _, t in pairs])
        feats = {k: v for k, v in found.items() if k in needed}
    return [
        collate(pairs, list(range(i, i + per_batch)), feats or None) for i in range(0, n, per_batch)
    ]


def run(model, amp, stack, batches, updates=3, device="cpu"):
    """Losses, and gradients and weights after each update."""
    opts = TrainOptions(device=device, lr=1e-3, warmup=1, label_smoothing=0.1, clip_norm=1.0)
    optimizer = make_optimizer(model, opts)
    route = route_from_options(
        "stacked" if stack else "eager", model, optimizer, opts, torch.device(device), amp
    )
    seen = []
    for k in range(updates):
        torch.manual_seed(100 + k)  # the same dropout masks in both runs
        group = batches[2 * k : 2 * k + 2]
        loss, nll = route.update(group, sum(b.target_tokens for b in group))
        grads = {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}
        weights = {n: p.detach().clone() for n, p in model.named_parameters()}
        seen.append((loss.item(), nll.item(), grads, weights))
    if stack:
        assert route.stacked is not None and route.stacked.stacks, "nothing was stacked"
    return seen


# bf16 is emulated on CPUs without native bf16 (several times slower): a model of each kind
# (an untied output matrix among them, which bf16 alone tells apart), every model in fp32
BF16 = ["baseline", "untied", "disreg", "fusing_diverse", "rnn-plain", "rnn-rnmt", "rnn-sdatt"]
CASES = [(n, None) for n in sorted(MODELS)] + [(n, torch.bfloat16) for n in BF16]


@pytest.mark.parametrize(
    ("name", "amp"), CASES, ids=[f"{n}-{'bf16' if a else 'fp32'}" for n, a in CASES]
)
def test_stacked_updates_are_the_per_parameter_updates(name, amp):
    torch.manual_seed(0)
    model = build_model(MODELS[name], VOCAB).train()
    twin = copy.deepcopy(model)
    batches = micro_batches(model)
    plain, stacked = run(model, amp, False, batches), run(twin, amp, True, batches)
    for k, (a, b) in enumerate(zip(plain, stacked)):
        assert a[:2] == b[:2], f"update {k}: losses {a[:2]} != {b[:2]}"
        for part, what in ((2, "gradient"), (3, "weight")):
            for n, t in a[part].items():
                u = b[part][n]
                if t is None:  # unused: no gradient either way (left out of the stacks)
                    assert u is None, f"update {k}: {n} has a {what} only when stacked"
                    continue
                assert torch.equal(t, u), f"update {k}: {what} of {n} differs"


def test_parameters_live_in_their_rows_and_get_their_rows_of_the_gradient():
    model = build_model({"preset": "tiny"}, VOCAB).train()
    stacked = StackedParameters(model, None)
    assert stacked.tensors < len(list(model.parameters()))
    name = "model.encoder.0.ffn.fc1.weight"
    stack = next(s for s in stacked.stacks if name in s.names)
    row, layer = stack.names.index(name), model.encoder[0].ffn.fc1
    with torch.no_grad():  # writing the stack writes the parameter
        stack.leaf[row].fill_(0.5)
    assert torch.all(layer.weight == 0.5)
    src = torch.tensor([[5, 6, 7, 2]])
    loss = stacked(lambda m, s, t: m(s, t).logsumexp(-1).sum(), src, src)
    loss.backward()
    assert layer.weight.grad is None  # until the update hands the rows out
    stacked.link_grads()
    assert layer.weight.grad.data_ptr() == stack.leaf.grad[row].data_ptr()
    assert layer.weight.grad.abs().sum() > 0
    stacked.zero_grad()
    assert layer.weight.grad is None and stack.leaf.grad is None


def test_where_parameters_are_stacked():
    from wordorder.errors import WordorderError
    from wordorder.train.stacked import use_stacks

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert use_stacks("auto", cuda, 1, False, False) is tried("stacked", "fp32", "transformer")
    assert not use_stacks("auto", cpu, 1, False, False)  # a CPU has no host work to save
    assert use_stacks(True, cpu, 1, False, False)
    assert not use_stacks(False, cuda, 1, False, False)
    for processes, compiled, graphs in [(2, False, False), (1, True, False), (1, False, True)]:
        assert not use_stacks("auto", cuda, processes, compiled, graphs)
        with pytest.raises(WordorderError, match="stack_parameters"):
            use_stacks(True, cuda, processes, compiled, graphs)


def test_a_checkpoint_holds_each_parameter_in_its_own_storage():
    """Saved from stacked parameters, a checkpoint has the bytes it would have had without."""
    from wordorder.model_io.checkpoint import cpu_state

    model = build_model({"preset": "tiny"}, VOCAB)
    before = cpu_state(model)
    before = {k: v.clone() for k, v in before.items()}
    StackedParameters(model, None)
    after = cpu_state(model)
    assert before.keys() == after.keys()
    for k, v in after.items():
        assert torch.equal(v, before[k])
        assert v.untyped_storage().nbytes() == v.numel() * v.element_size(), k
