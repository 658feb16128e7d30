"""bf16 training on the CPU (``train.cpu_amp``): every model of both families trains under the
CPU's bf16 autocast with losses and gradients close to float32's, and the learners of the
CUDA tests learn the synthetic reordering task with it to the same bar.

Skipped on CPUs without native bf16 (AVX512-BF16 / AMX), where cpu_amp is refused.
"""

from __future__ import annotations

import pytest
import torch
from reordering_task import BLEU_BAR
from test_cuda import LEARNERS, MODELS, model_and_data, train_learner

from wordorder.device import cpu_has_native_bf16
from wordorder.model_io.batching import collate
from wordorder.train.loop import TrainOptions
from wordorder.train.routes import route_from_options
from wordorder.train.update import batch_loss, make_optimizer

pytestmark = pytest.mark.skipif(
    not cpu_has_native_bf16(), reason="this CPU has no native bf16 (AVX512-BF16 or AMX)"
)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bf16_loss_and_gradients_are_close_to_float32_and_updates_move(name):
    """Loss within 2 % of float32's; the whole gradient within 5 % of float32's in norm, and each
    parameter's within 10 % of its own norm plus 2 % of the whole gradient's (bf16 keeps 8 bits;
    a missing term or wrong mask moves a gradient by O(1) of its norm; gradients that are zero
    in exact arithmetic, such as a bias before a normalisation, are rounding noise in both
    precisions, hence the share of the whole); three updates move the weights, all finite."""
    model, data, feats, _ = model_and_data(name, n_train=24, n_test=2)
    batch = collate(data[0], None, feats)
    model.train()
    loss32, _ = batch_loss(model, batch, 0.1, None)
    loss32.backward()
    grads32 = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    loss16, _ = batch_loss(model, batch, 0.1, torch.bfloat16)
    assert loss16.dtype == torch.float32
    assert abs(loss16.item() - loss32.item()) <= 0.02 * loss32.item()
    loss16.backward()
    grads16 = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    assert grads16.keys() == grads32.keys()
    whole = torch.cat([g.flatten() for g in grads32.values()]).norm()
    whole_error = torch.cat([(grads16[n] - g).flatten() for n, g in grads32.items()]).norm()
    assert whole_error < 0.05 * whole
    for pname, ref in grads32.items():
        error = (grads16[pname] - ref).norm()
        bound = 0.1 * ref.norm() + 0.02 * whole
        assert error < bound, f"{pname}: bf16 gradient off by {error:.3g} (bound {bound:.3g})"

    opts = TrainOptions(device="cpu", cpu_amp=True, lr=1e-3, warmup=1, label_smoothing=0.1)
    optimizer = make_optimizer(model, opts)
    route = route_from_options("eager", model, optimizer, opts, batch.src.device, torch.bfloat16)
    before = [p.detach().clone() for p in model.parameters()]
    for _ in range(3):
        loss, _ = route.update([batch], batch.target_tokens)
        assert torch.isfinite(loss)
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert any(not torch.equal(a, p) for a, p in zip(before, model.parameters()))


@pytest.mark.slow
@pytest.mark.parametrize("name", LEARNERS)
def test_learns_svo_to_sov_with_cpu_amp(name, tmp_path):
    """Trained with ``cpu_amp`` (the Trainer's own bf16 path), beam 4 reaches the float32 tests'
    bar; the training summary says it ran in bf16."""
    _, summary, score, _, _ = train_learner(name, tmp_path, device="cpu", cpu_amp=True)
    assert summary["precision"] == "bf16"
    print(f"\n{name} with cpu_amp: {summary['steps']} updates, BLEU {score:.2f}")
    assert score >= BLEU_BAR
