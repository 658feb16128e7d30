"""The CPU dropout and the fused output-projection loss behave exactly like the stock ones."""

from __future__ import annotations

import math
import platform

import pytest
import torch
import torch.nn.functional as F

from wordorder.device import keep_freed_cpu_memory
from wordorder.models.dropout import Dropout, dropout, dropout_add, keep_mask
from wordorder.specials import PAD_ID
from wordorder.train.loss import _Workspace, linear_cross_entropy


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5])
def test_keep_mask_rate_is_p_within_five_sigma(p):
    torch.manual_seed(0)
    n = 400_003  # not a multiple of the four lanes per random integer
    kept = keep_mask((n,), p, torch.device("cpu")).double().mean().item()
    assert abs(kept - (1 - p)) < 5 * math.sqrt(p * (1 - p) / n)


def test_keep_mask_lanes_are_independent():
    # Neighbouring elements come from the same 64-bit draw: their joint keep
    # rate must still be (1-p)².
    torch.manual_seed(1)
    keep = keep_mask((200_000, 4), 0.5, torch.device("cpu")).double()
    for a in range(4):
        for b in range(a + 1, 4):
            assert abs((keep[:, a] * keep[:, b]).mean().item() - 0.25) < 0.006


def test_dropout_scales_kept_values_and_gradients():
    torch.manual_seed(2)
    x = torch.randn(64, 33, requires_grad=True)
    y = dropout(x, 0.2, training=True)
    kept = y != 0
    assert torch.allclose(y[kept], x[kept] / 0.8)
    y.sum().backward()
    assert torch.allclose(x.grad, kept.float() / 0.8)


def test_dropout_is_reproducible_and_identity_in_eval():
    x = torch.randn(10, 20)
    torch.manual_seed(3)
    a = dropout(x, 0.1, training=True)
    torch.manual_seed(3)
    assert torch.equal(a, dropout(x, 0.1, training=True))
    module = Dropout(0.1).eval()
    assert module(x) is x
    assert dropout(x, 0.0, training=True) is x


def test_dropout_add_is_the_residual_of_dropout():
    x, y = torch.randn(7, 9), torch.randn(7, 9)
    torch.manual_seed(4)
    fused = dropout_add(x, y, 0.3, training=True)
    torch.manual_seed(4)
    assert torch.allclose(fused, x + dropout(y, 0.3, training=True))
    assert torch.equal(dropout_add(x, y, 0.3, training=False), x + y)


def _reference(hidden, weight, target, eps):
    logits = F.linear(hidden, weight).view(-1, weight.size(0))
    loss = F.cross_entropy(
        logits, target.view(-1), ignore_index=0, label_smoothing=eps, reduction="sum"
    )
    nll = F.cross_entropy(logits, target.view(-1), ignore_index=0, reduction="sum")
    return loss, nll


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_linear_cross_entropy_equals_projection_then_cross_entropy(eps):
    torch.manual_seed(5)
    hidden = (3 * torch.randn(4, 6, 16)).requires_grad_()
    weight = torch.randn(50, 16).requires_grad_()
    target = torch.randint(1, 50, (4, 6))
    target[0, 2:] = 0  # PAD rows take no part
    target[3, :] = 0
    loss, nll = linear_cross_entropy(hidden, weight, target, eps)
    loss.backward()
    got = hidden.grad.clone(), weight.grad.clone()
    hidden.grad = weight.grad = None
    ref_loss, ref_nll = _reference(hidden, weight, target, eps)
    ref_loss.backward()
    assert loss.item() == pytest.approx(ref_loss.item(), rel=1e-5)
    assert nll.item() == pytest.approx(ref_nll.item(), rel=1e-5)
    assert not nll.requires_grad
    torch.testing.assert_close(got[0], hidden.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got[1], weight.grad, rtol=1e-4, atol=1e-5)
    assert torch.all(got[0][3] == 0)  # a PAD row gets no gradient


def test_linear_cross_entropy_is_exact_when_the_reference_probability_underflows():
    # p(y) = exp(-300) is 0 in float32: the NLL must still be the exact 300-ish, not inf.
    hidden = torch.tensor([[30.0, 0.0], [0.0, 1.0]], requires_grad=True)
    weight = torch.tensor([[10.0, 0.0], [0.0, 0.0], [-10.0, 0.0]], requires_grad=True)
    target = torch.tensor([2, 0])
    loss, nll = linear_cross_entropy(hidden, weight, target, 0.1)
    ref_loss, ref_nll = _reference(hidden, weight, target, 0.1)
    assert math.isfinite(nll.item()) and nll.item() > 599
    assert nll.item() == pytest.approx(ref_nll.item(), rel=1e-6)
    assert loss.item() == pytest.approx(ref_loss.item(), rel=1e-6)
    loss.backward()
    got = hidden.grad.clone()
    hidden.grad = None
    ref_loss.backward()
    torch.testing.assert_close(got, hidden.grad)


def test_linear_cross_entropy_workspace_survives_interleaved_graphs():
    # The (N, V) buffer is reused between updates; two graphs alive at once must not share it.
    torch.manual_seed(6)
    weight = torch.randn(30, 8, requires_grad=True)
    h1, h2 = torch.randn(5, 8, requires_grad=True), torch.randn(9, 8, requires_grad=True)
    t1, t2 = torch.randint(1, 30, (5,)), torch.randint(1, 30, (9,))
    l1, _ = linear_cross_entropy(h1, weight, t1, 0.1)
    l2, _ = linear_cross_entropy(h2, weight, t2, 0.1)
    (l1 + l2).backward()
    got = h1.grad.clone(), h2.grad.clone(), weight.grad.clone()
    h1.grad = h2.grad = weight.grad = None
    (_reference(h1, weight, t1, 0.1)[0] + _reference(h2, weight, t2, 0.1)[0]).backward()
    for a, b in zip(got, (h1.grad, h2.grad, weight.grad)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_workspace_reuses_a_returned_tensor_of_any_shape_for_smaller_requests():
    # Off the CPU the softmax is a new (N, V) tensor and that is what comes back: the next,
    # smaller request must get a (rows, cols) view of its storage, not a slice of its rows.
    ws = _Workspace()
    returned = torch.empty(7, 30)
    ws.give_back(returned)
    z = ws.take(5, 30, returned.device)
    assert z.shape == (5, 30) and z.data_ptr() == returned.data_ptr()
    ws.give_back(z)
    z = ws.take(4, 11, returned.device)
    assert z.shape == (4, 11) and z.data_ptr() == returned.data_ptr()
    ws.give_back(z)
    ws.give_back(torch.empty(2, 3))  # smaller than the one kept: the larger one stays
    assert ws.take(7, 30, returned.device).data_ptr() == returned.data_ptr()


def test_linear_cross_entropy_without_gradients():
    torch.manual_seed(7)
    hidden, weight, target = torch.randn(3, 8), torch.randn(20, 8), torch.randint(1, 20, (3,))
    with torch.no_grad():
        loss, nll = linear_cross_entropy(hidden, weight, target, 0.1)
    ref_loss, ref_nll = _reference(hidden, weight, target, 0.1)
    assert loss.item() == pytest.approx(ref_loss.item(), rel=1e-5)
    assert nll.item() == pytest.approx(ref_nll.item(), rel=1e-5)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="a glibc setting")
def test_keep_freed_cpu_memory_takes_effect_on_glibc():
    assert keep_freed_cpu_memory() is True


def _grads(loss, *inputs):
    return torch.autograd.grad(loss, inputs)


def test_linear_cross_entropy_in_bf16_is_as_accurate_as_autocast():
    """With bf16 products (CPU autocast training) the fused loss errs no more than torch's own
    autocast path (bf16 logits, then F.cross_entropy in float32), both against float64."""
    torch.manual_seed(6)
    hidden = 2 * torch.randn(96, 32)
    weight = 0.5 * torch.randn(700, 32)
    target = torch.randint(1, 700, (96,))
    target[::7] = 0
    exact = [t.double().requires_grad_() for t in (hidden, weight)]
    ref_loss, ref_nll = _reference(*exact, target, 0.1)
    ref = [ref_loss, ref_nll, *_grads(ref_loss, *exact)]

    ours_in = [t.clone().requires_grad_() for t in (hidden, weight)]
    loss, nll = linear_cross_entropy(*ours_in, target, 0.1, compute_dtype=torch.bfloat16)
    ours = [loss, nll, *_grads(loss, *ours_in)]

    auto_in = [t.clone().requires_grad_() for t in (hidden, weight)]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = F.linear(*auto_in)
    flat = logits.float()
    a_loss = F.cross_entropy(flat, target, ignore_index=0, label_smoothing=0.1, reduction="sum")
    a_nll = F.cross_entropy(flat, target, ignore_index=0, reduction="sum")
    auto = [a_loss, a_nll, *_grads(a_loss, *auto_in)]

    for name, r, o, a in zip(("loss", "nll", "grad hidden", "grad weight"), ref, ours, auto):
        scale = r.abs().max().item()
        err_ours = (o.double() - r).abs().max().item() / scale
        err_auto = (a.double() - r).abs().max().item() / scale
        # bf16 keeps 8 bits; the gradients, P − q with cancellation, err most (3 % here)
        assert err_ours < 0.05, name
        assert err_ours <= 1.5 * err_auto + 1e-6, (name, err_ours, err_auto)
    assert ours[2][::7].abs().max() == 0  # PAD rows still get no gradient


def test_logits_loss_equals_two_cross_entropies():
    """The CUDA path's loss from one log-softmax: F.cross_entropy's smoothed loss and NLL (PAD
    ignored), values and gradient, in float64."""
    from wordorder.train.loss import logits_loss

    torch.manual_seed(3)
    logits = torch.randn(40, 17, dtype=torch.float64, requires_grad=True)
    target = torch.randint(1, 17, (40,))
    target[::7] = PAD_ID
    loss, nll = logits_loss(logits, target, 0.1)
    (grad,) = torch.autograd.grad(loss, logits)
    ref = F.cross_entropy(logits, target, ignore_index=PAD_ID, label_smoothing=0.1, reduction="sum")
    (ref_grad,) = torch.autograd.grad(ref, logits)
    ref_nll = F.cross_entropy(logits, target, ignore_index=PAD_ID, reduction="sum")
    torch.testing.assert_close(loss, ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(nll, ref_nll.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-12, atol=1e-12)
    assert not nll.requires_grad
