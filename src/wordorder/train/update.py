"""The parts of an update that every route shares (:mod:`wordorder.train.routes`): the
label-smoothed loss of a batch, Adam (built, and made ready after loading a saved state); and
the dev loss."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch

from wordorder.device import cpu_kernels
from wordorder.model_io.batching import Batch, Pair, collate, make_batches
from wordorder.models.base import Seq2SeqModel
from wordorder.specials import PAD_ID
from wordorder.train.loss import linear_cross_entropy, logits_loss
from wordorder.train.options import TrainOptions

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


def prepare_optimizer(optimizer: torch.optim.Optimizer, capturable: bool) -> None:
    """Make an optimizer, loaded or not, what :func:`make_optimizer` builds for ``capturable``.

    A loaded state carries the settings of the run that saved it (``Optimizer.load_state_dict``
    keeps the saved groups' values), read by :mod:`wordorder.train.resume` onto the CPU: its
    ``capturable`` flag, a rate that is a float or a CPU tensor, and Adam's step counters where
    that run kept them. A captured step reads the rate tensor it was captured with; one left on
    the CPU is read once, into the graph, and the scheduler's writes never reach the weights.
    So the rate becomes a tensor on the parameters' device (capturable) or a float (not), and
    a capturable Adam's step counters move to the parameters' device too.
    """
    for group in optimizer.param_groups:
        device = group["params"][0].device
        lr = group["lr"]
        group["capturable"] = capturable
        if capturable:
            if not isinstance(lr, torch.Tensor) or lr.device != device:
                group["lr"] = torch.tensor(float(lr), device=device)
        elif isinstance(lr, torch.Tensor):
            group["lr"] = float(lr)
        if not capturable:
            continue
        for p in group["params"]:
            step = optimizer.state.get(p, {}).get("step")
            if isinstance(step, torch.Tensor) and step.device != p.device:
                optimizer.state[p]["step"] = step.to(p.device)


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
