"""Parameters stacked by shape: one autograd leaf, one cast and one gradient per stack.

A Transformer-base update touches ~200 parameter tensors, and per tensor autograd accumulates
a gradient (a ``detach`` on a GPU's host), autocast casts the weight to the low precision
before the product and casts its gradient back after it (two ``_to_copy`` kernels): ~600 of
the update's operators, all host work on a GPU (:mod:`wordorder.train.opcount`). Here the
weights and biases of the linear and layer-norm modules of equal shape are rows of one tensor
(the stack), and the update runs the model on the stack's rows through
:func:`torch.func.functional_call`: per stack, one cast (to the autocast dtype, for the linear
modules' stacks: the cast autocast would make of each row), one ``unbind`` and, backward, one
``stack`` that becomes the stack's gradient, handed to the parameters as rows by one more
``unbind``.

The numbers are those of the per-parameter update: the rows are cast as autocast casts them,
and each parameter's gradient is its row of the stack's gradient. The module's parameters
stay :class:`~torch.nn.Parameter` objects (checkpoints, the optimizer and decoding see them as
before), whose storage is now their row of the stack and whose ``.grad`` is their row of the
stack's gradient. Only the parameters a first update used are stacked (the trainer runs its
first update per parameter), because a stacked parameter that an update does not use gets a
zero gradient rather than none.

Other parameters (embeddings, relative-position tables, recurrent cells) stay leaves of their
own: an embedding is used in float32 by its lookup, and a parameter used at every step of a
recurrent loop is cast once per update only as a leaf (autocast caches the casts of leaves).
So does the output matrix, even an untied linear one: the fused loss of the CPU
(:mod:`wordorder.train.loss`) forms its gradient's label terms from it in float32.

``train.stack_parameters`` (:func:`use_stacks`) stacks on a GPU by default: on a CPU an update
is arithmetic rather than host work, and stacking saved nothing measurable there (a first
version, which added each gradient into a persistent one, cost 4-15 %).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn
from torch.func import functional_call

from wordorder.errors import WordorderError

STACKED_MODULES = (nn.Linear, nn.LayerNorm)


@dataclass
class _Stack:
    names: list[str]
    params: list[nn.Parameter]
    leaf: Tensor  # (n, *shape), requires grad; the parameters' storage
    cast: bool  # cast to the autocast dtype before use (linear modules' weights and biases)


class _Call(nn.Module):
    """``fn(model, *args)`` as a module call, so that functional_call can swap its tensors."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(self.model, *args)


class StackedParameters:
    """The linear and layer-norm parameters of ``model`` stacked by (shape, kind); see the
    module docstring. ``amp_dtype``: the autocast dtype of the updates (None: float32).

    Create it after the model is on its device (moving a module replaces its parameters'
    storage); an update calls :meth:`zero_grad` instead of the optimizer's, runs the loss
    through it (``stacked(loss_fn, batch)``) and calls :meth:`link_grads` after the backward
    passes (the ``stacked`` route of :mod:`wordorder.train.routes` does all three).
    """

    def __init__(
        self, model: nn.Module, amp_dtype: torch.dtype | None, used: set[int] | None = None
    ) -> None:
        """``used``: ids of the parameters to stack if used (those with a gradient after a
        first update: :func:`used_parameters`); None = all."""
        self.model, self.amp_dtype = model, amp_dtype
        self.call = _Call(model)
        kinds: dict[int, bool] = {}  # parameter id → cast (linear) or not (layer norm)
        for module in model.modules():
            if isinstance(module, STACKED_MODULES):
                for p in module.parameters(recurse=False):
                    kinds[id(p)] = isinstance(module, nn.Linear) and amp_dtype is not None
        output = getattr(model, "output_weight", None)
        kinds.pop(id(output), None)
        groups: dict[tuple, list[tuple[str, nn.Parameter]]] = defaultdict(list)
        self.loose: list[nn.Parameter] = []
        # named_parameters lists a tied parameter once, under its first name; functional_call
        # then feeds every use of it
        for name, p in model.named_parameters():
            if id(p) in kinds and p.requires_grad and (used is None or id(p) in used):
                groups[(tuple(p.shape), p.dtype, kinds[id(p)])].append((name, p))
            elif p.requires_grad:
                self.loose.append(p)
        self.stacks: list[_Stack] = []
        for (_, _, cast), members in groups.items():
            with torch.no_grad():
                leaf = torch.stack([p for _, p in members])
            leaf.requires_grad_()
            for i, (_, p) in enumerate(members):
                p.data = leaf.data[i]  # the parameter lives in its row from now on
            names = [f"model.{n}" for n, _ in members]
            self.stacks.append(_Stack(names, [p for _, p in members], leaf, cast))
        self.zero_grad()

    @property
    def tensors(self) -> int:
        """Autograd leaves of an update: stacks + the parameters left alone."""
        return len(self.stacks) + len(self.loose)

    def zero_grad(self) -> None:
        """Drop every gradient, as ``zero_grad(set_to_none=True)``: the first backward pass of
        the next update then hands each stack its gradient without a copy."""
        for stack in self.stacks:
            stack.leaf.grad = None
            for p in stack.params:
                p.grad = None
        for p in self.loose:
            p.grad = None

    def link_grads(self) -> None:
        """After the update's backward passes: each stacked parameter's ``.grad`` becomes its
        row of its stack's gradient (one ``unbind`` per stack), for clipping and the optimizer."""
        for stack in self.stacks:
            grad = stack.leaf.grad
            rows = grad.unbind(0) if grad is not None else [None] * len(stack.params)
            for p, row in zip(stack.params, rows):
                p.grad = row

    def rows(self) -> dict[str, Tensor]:
        """Every stacked parameter's row, cast where autocast would cast it."""
        rows: dict[str, Tensor] = {}
        for stack in self.stacks:
            leaf = stack.leaf
            if stack.cast:
                leaf = leaf.to(self.amp_dtype)
            rows.update(zip(stack.names, leaf.unbind(0)))
        return rows

    def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(model, *args)`` with the model's stacked parameters read from their stacks."""
        return functional_call(self.call, self.rows(), (fn, *args), strict=False)


def used_parameters(model: nn.Module) -> set[int]:
    """Ids of the parameters of ``model`` that hold a gradient (after an update)."""
    return {id(p) for p in model.parameters() if p.grad is not None}


def use_stacks(
    setting: bool | str,
    device: torch.device,
    processes: int,
    compiled: bool,
    graphs: bool,
    precision: str = "fp32",
    family: str = "transformer",
) -> bool:
    """Whether a run stacks its parameters (``train.stack_parameters``): ``auto`` on a CUDA
    device where the route table says stacked updates of this precision and family passed the
    GPU checks with the running torch (:mod:`wordorder.gpu_table`; else eager, said in the
    log), ``true`` on any; either only for one process's eager updates, where ``true``
    elsewhere is an error saying why."""
    from wordorder.gpu_table import tried, untried

    if not setting:
        return False
    if setting == "auto" and device.type == "cuda" and processes == 1 and not compiled:
        if not graphs and not tried("stacked", precision, family):
            print(
                f"train.stack_parameters auto: unstacked ({untried('stacked', precision, family)})"
            )
            return False
    if processes > 1:
        why = "DDP hooks each parameter"
    elif compiled:
        why = "train.compile compiles the per-parameter update"
    elif graphs:
        why = "train.cuda_graphs replays updates with no host operators to save"
    else:
        return setting is True or device.type == "cuda"
    if setting == "auto":
        return False
    raise WordorderError(
        f"train.stack_parameters: true needs one process's eager updates ({why})",
        hint="set train.stack_parameters: auto or false",
    )
