"""Label-smoothed cross-entropy fused with the output projection.

The loss of a translation model is ``CE(softmax(H Wᵀ), y)`` with label smoothing ε: the
target distribution puts 1 − ε on the reference token and ε/V on every token (as
``F.cross_entropy(label_smoothing=ε)`` does). Written as separate steps, autograd keeps the
(N, V) logits and log-probabilities and walks over them five or six times (log-softmax,
gather, smoothing sum, NLL for logging, two backward kernels and a zero-filled gradient). Here
one pass computes the logits, the loss, the NLL and the gradient with respect to the logits,
``softmax(z) − q``, in place of the logits; the backward pass is then two matrix products.
Measured on 2 CPU threads for 2,048 tokens, d = 256, V = 8,000: 112 ms against 183 ms for
projection + ``F.cross_entropy`` forward and backward (a micro-benchmark of this function alone).

Only rows whose target is not PAD are projected at all.
"""

from __future__ import annotations

import torch
from torch import Tensor

from wordorder.specials import PAD_ID


class _Workspace:
    """One reusable (N, V) buffer per device for the logits/gradient.

    A fresh 65 MB tensor every update is a fresh mmap on the CPU: page faults made the
    projection 1.5× slower (228 against 335 GFLOP/s measured). The buffer is lent from the
    forward to the end of the backward; a second forward before that gets its own tensor.
    """

    def __init__(self) -> None:
        self.free: dict[torch.device, Tensor] = {}

    def take(self, rows: int, cols: int, device: torch.device) -> Tensor:
        buf = self.free.pop(device, None)
        if buf is None or buf.numel() < rows * cols:
            buf = torch.empty(rows * cols, dtype=torch.float32, device=device)
        return buf[: rows * cols].view(rows, cols)

    def give_back(self, t: Tensor) -> None:
        base = t._base if t._base is not None else t
        current = self.free.get(base.device)
        if current is None or current.numel() < base.numel():
            self.free[base.device] = base


_WORKSPACE = _Workspace()


class _LinearCrossEntropy(torch.autograd.Function):
    """Summed smoothed loss and summed NLL of ``h Wᵀ`` against ``target`` (rows already non-PAD)."""

    @staticmethod
    def forward(ctx, hidden: Tensor, weight: Tensor, target: Tensor, smoothing: float) -> tuple[Tensor, Tensor]:
        # hidden: (N, d), weight: (V, d), target: (N,)
        vocab = weight.size(0)
        z = _WORKSPACE.take(hidden.size(0), vocab, hidden.device)  # (N, V)
        torch.mm(hidden.float(), weight.float().t(), out=z)
        z.sub_(z.amax(dim=-1, keepdim=True))  # for a stable exp
        z_target = z.gather(1, target[:, None]).squeeze(1)
        z_mean = z.mean(dim=-1)
        z.exp_()
        total = z.sum(dim=-1, keepdim=True)
        lse = total.log().squeeze(1)
        nll = lse - z_target  # −log p(y)
        loss = ((1.0 - smoothing) * nll + smoothing * (lse - z_mean)).sum()
        nll_sum = nll.sum()
        ctx.mark_non_differentiable(nll_sum)
        if not any(ctx.needs_input_grad[:2]):
            _WORKSPACE.give_back(z)
            return loss, nll_sum
        # ∂loss/∂z = softmax(z) − q, q = (1 − ε)·onehot(y) + ε/V
        z.div_(total).sub_(smoothing / vocab)
        z.scatter_add_(1, target[:, None], z.new_full((z.size(0), 1), -(1.0 - smoothing)))
        ctx.save_for_backward(hidden, weight, z)
        return loss, nll_sum

    @staticmethod
    def backward(ctx, grad_loss: Tensor, _grad_nll: Tensor) -> tuple[Tensor | None, ...]:
        hidden, weight, grad_z = ctx.saved_tensors
        grad_hidden = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_hidden = (grad_z @ weight.float()).mul_(grad_loss).to(hidden.dtype)
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_z.t() @ hidden.float()).mul_(grad_loss).to(weight.dtype)
        _WORKSPACE.give_back(grad_z)
        return grad_hidden, grad_weight, None, None


def linear_cross_entropy(hidden: Tensor, weight: Tensor, target: Tensor, smoothing: float = 0.0
                         ) -> tuple[Tensor, Tensor]:
    """Summed label-smoothed loss and summed NLL (no gradient) over the non-PAD targets.

    Args:
        hidden: (..., d) states the output matrix is applied to.
        weight: (V, d) output matrix (no bias).
        target: (...) LongTensor of reference ids, PAD where there is none.
        smoothing: ε of label smoothing.
    Returns:
        Two float32 scalars; equal to ``F.cross_entropy(hidden @ weight.T, target,
        ignore_index=PAD, label_smoothing=ε, reduction="sum")`` and the same with ε = 0.
    """
    flat_target = target.reshape(-1)
    keep = flat_target.ne(PAD_ID).nonzero().squeeze(1)
    rows = hidden.reshape(-1, hidden.size(-1)).index_select(0, keep)
    return _LinearCrossEntropy.apply(rows, weight, flat_target.index_select(0, keep), float(smoothing))
