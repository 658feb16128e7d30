"""One optimizer update: the label-smoothed loss of a batch, gradient accumulation over the
batches of an update (with DDP: over this process' share), Adam; and the dev loss."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence

import torch

from wordorder.device import cpu_kernels
from wordorder.model_io.batching import Batch, Pair, collate, make_batches
from wordorder.models.base import Seq2SeqModel
from wordorder.specials import PAD_ID
from wordorder.train.loss import linear_cross_entropy, logits_loss
from wordorder.train.options import TrainOptions
from wordorder.train.stacked import StackedParameters

Feats = Mapping[str, Sequence[Sequence[int]]]


def batch_loss(
    model: Seq2SeqModel, batch: Batch, smoothing: float, amp_dtype: torch.dtype | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed label-smoothed loss and summed NLL over the non-PAD target tokens (float32).

    On the CPU the output projection and the loss run fused (:mod:`wordorder.train.loss`; its
    products in the autocast dtype under ``cpu_amp``). On CUDA the logits are formed (in the
    autocast dtype under AMP) and normalised in float32 (:func:`~wordorder.train.loss.
    logits_loss`): no operator there waits for the device (the fused loss selects the non-PAD
    rows, a host sync), so an update can be queued ahead of the GPU and captured in a graph.
    """
    target = batch.tgt_out
    autocast = torch.autocast(
        device_type=batch.src.device.type,
        dtype=amp_dtype or torch.float32,
        enabled=amp_dtype is not None,
    )
    if cpu_kernels(batch.src):
        with autocast:
            hidden = model.forward_hidden(batch.src, batch.tgt_in, batch.feats)
        loss, nll = linear_cross_entropy(
            hidden, model.output_weight, target, smoothing, compute_dtype=amp_dtype or torch.float32
        )
    else:
        with autocast:
            logits = model(batch.src, batch.tgt_in, batch.feats)
        # float32 (float64 stays): the softmax of bf16 logits in bf16 loses too much
        logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
        logits = logits.view(-1, logits.size(-1))
        loss, nll = logits_loss(logits, target.reshape(-1), smoothing)
    aux = model.auxiliary_loss
    if aux is not None and model.training:
        # A per-token regulariser (e.g. head disagreement): scaled like the summed loss.
        loss = loss + aux.float() * target.ne(PAD_ID).sum()
        model.auxiliary_loss = None
    return loss, nll


LossFn = Callable[[Seq2SeqModel, Batch], tuple[torch.Tensor, torch.Tensor]]


def loss_function(
    smoothing: float,
    amp_dtype: torch.dtype | None,
    compile_it: bool = False,
    backend: str = "inductor",
) -> LossFn:
    """``(model, batch) → (summed loss, summed NLL)``: :func:`batch_loss` with these settings;
    ``compile_it``: through ``torch.compile`` (dynamic shapes, so one compilation serves every
    batch shape; inductor on the CPU, Triton kernels on CUDA; ``backend`` another of
    torch.compile's, e.g. ``aot_eager`` in tests that check equality, not generated code)."""

    def loss(model: Seq2SeqModel, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return batch_loss(model, batch, smoothing, amp_dtype)

    return torch.compile(loss, dynamic=True, backend=backend) if compile_it else loss


def make_optimizer(
    model: Seq2SeqModel, opts: TrainOptions, capturable: bool = False
) -> torch.optim.Optimizer:
    """Adam with the options' betas, eps and weight decay (the fused kernel: one pass over
    all parameters instead of a dozen small ones per tensor), at the schedule's peak rate.

    ``capturable`` (CUDA graphs, :mod:`wordorder.train.graphs`): the step can be captured, and
    the learning rate is a device tensor the scheduler writes into, so replays use the current
    rate rather than the one captured.
    """
    from wordorder.train.schedule import peak_lr

    lr = peak_lr(opts.lr, opts.warmup, opts.schedule, int(model.options.d_model))
    device = next(model.parameters()).device
    return torch.optim.Adam(
        model.parameters(),
        lr=torch.tensor(lr, device=device) if capturable else lr,
        betas=opts.betas,
        eps=opts.eps,
        weight_decay=opts.weight_decay,
        fused=True,
        capturable=capturable,
    )


def set_capturable(optimizer: torch.optim.Optimizer, capturable: bool) -> None:
    """Make a loaded optimizer state match :func:`make_optimizer`'s ``capturable`` (a state
    saved by a run with the other setting carries that run's flag and rate type)."""
    for group in optimizer.param_groups:
        lr = group["lr"]
        device = group["params"][0].device
        group["capturable"] = capturable
        if capturable and not isinstance(lr, torch.Tensor):
            group["lr"] = torch.tensor(lr, device=device)
        elif not capturable and isinstance(lr, torch.Tensor):
            group["lr"] = float(lr)


def update(
    model: Seq2SeqModel,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    group: Sequence[Batch],
    opts: TrainOptions,
    device: torch.device,
    amp_dtype: torch.dtype | None,
    ddp: torch.nn.parallel.DistributedDataParallel | None = None,
    world: int = 1,
    n_tokens: int | None = None,
    loss_fn: LossFn | None = None,
    stacked: StackedParameters | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """One optimizer update over the micro-batches ``group`` (gradient accumulation).

    With ``ddp`` (:mod:`wordorder.train.distributed`), ``group`` is this process' share of the
    update and ``n_tokens`` the target tokens of the whole update (all processes); gradients
    are all-reduced once, at the last micro-batch.

    ``loss_fn(model, batch)``: the loss of a batch on the device (:func:`loss_function`).
    ``stacked``: the model's parameters stacked by shape (:mod:`wordorder.train.stacked`; not
    with ``ddp``): the loss runs through it, and it hands the parameters their gradients.

    Returns the summed loss and NLL (detached tensors, not synchronised) and the number of
    target tokens; the loss is averaged per target token over the whole update.
    """
    loss_fn = loss_fn or loss_function(opts.label_smoothing, amp_dtype)
    if n_tokens is None:
        n_tokens = sum(b.target_tokens for b in group)  # counted on the CPU: no device sync
    if stacked is not None:
        stacked.zero_grad()
    else:
        optimizer.zero_grad(set_to_none=True)
    loss_sum = nll_sum = torch.zeros((), device=device)
    for k, batch in enumerate(group):
        # DDP averages gradients over processes: scale by world so that the result is the sum.
        sync = ddp is None or k == len(group) - 1
        with contextlib.nullcontext() if sync or ddp is None else ddp.no_sync():
            if stacked is not None:
                loss, nll = stacked(loss_fn, batch.to(device))
            elif ddp is None:
                loss, nll = loss_fn(model, batch.to(device))
            else:
                loss, nll = ddp(batch.to(device))
            scaler.scale(loss * (world / n_tokens)).backward()
        loss_sum, nll_sum = loss_sum + loss.detach(), nll_sum + nll
    if stacked is not None:
        stacked.link_grads()
    if opts.clip_norm > 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), opts.clip_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss_sum, nll_sum, n_tokens


@torch.inference_mode()
def dev_loss(
    model: Seq2SeqModel,
    pairs: Sequence[Pair],
    batch_tokens: int,
    device: torch.device,
    amp_dtype: torch.dtype | None,
    feats: Feats | None = None,
) -> float:
    """Mean NLL per target token of ``pairs`` (model left in the mode it was in)."""
    was_training = model.training
    model.eval()
    total, tokens = 0.0, 0
    for idx in make_batches(pairs, batch_tokens, seed=0, shuffle=False):
        batch = collate(pairs, idx, feats).to(device)
        total += float(batch_loss(model, batch, 0.0, amp_dtype)[1])
        tokens += batch.target_tokens
    model.train(was_training)
    return total / max(tokens, 1)
