"""Update plans and runs shared by the route tests on the CPU (tests/unit/test_routes.py) and
on a GPU (tests/system/test_cuda.py): two static batch shapes interleaved, accumulation,
clipping, a warm-up; a run killed and resumed from its saved state as the trainer resumes."""

from __future__ import annotations

import copy

import torch
from graph_standin import ReplayedCalls
from reordering_task import make_data

from wordorder.model_io.batching import collate, make_batches, static_shape
from wordorder.train.options import TrainOptions
from wordorder.train.routes import route_from_options
from wordorder.train.schedule import make_scheduler
from wordorder.train.update import make_optimizer, prepare_optimizer

CPU = torch.device("cpu")


def plan_and_batches():
    """Updates over two static batch shapes, interleaved, then two updates accumulating one
    batch of each (as tests/system/test_cuda.py plans them for the GPU)."""
    pairs = make_data(400, 2, seed=5)[0]
    budget, steps = 300, 4
    batches = make_batches(pairs, budget, seed=1, width_steps=steps)
    shaped = [collate(pairs, b, shape=static_shape(pairs, b, budget, steps)) for b in batches]
    key = lambda b: tuple(b.src.shape) + tuple(b.tgt_in.shape)  # noqa: E731
    shapes = sorted({key(b) for b in shaped})
    by_shape = {s: [b for b in shaped if key(b) == s] for s in shapes[:2]}
    plan = [[by_shape[shapes[i % 2]][i // 2 % len(by_shape[shapes[i % 2]])]] for i in range(8)]
    return plan + [[plan[0][0], plan[1][0]]] * 2


def run_with_resume(model, name, plan, cut, tmp_path, device=CPU, backend=None):
    """``plan`` through route ``name`` with the schedule; with ``cut``, the run is saved after
    ``cut`` updates (model, optimizer, scheduler: torch.save, read back onto the CPU as resume
    reads it) and continued by a new route over the loaded state. Returns the rate each update
    ran at (read from the optimizer), the final weights and the optimizer's state. ``model`` on
    the CPU; it is copied to ``device``."""
    opts = TrainOptions(device=str(device), lr=1e-3, warmup=4, label_smoothing=0.1, clip_norm=0.5)
    graphed = name == "graphed"

    def fresh(weights=None):
        m = copy.deepcopy(model).to(device).train()
        if weights is not None:
            m.load_state_dict(weights)
        optimizer = make_optimizer(m, opts, capturable=graphed)
        scheduler = make_scheduler(optimizer, opts)
        return m, optimizer, scheduler

    def route_of(m, optimizer):
        # on the CPU the graphs' stand-in; on a GPU, backend None: CUDA's own graphs
        extra = {"backend": backend or (ReplayedCalls() if device.type == "cpu" else None)}
        return route_from_options(name, m, optimizer, opts, device, **(extra if graphed else {}))

    m, optimizer, scheduler = fresh()
    route = route_of(m, optimizer)
    rates = []
    for k, group in enumerate(plan):
        if k == cut:
            path = tmp_path / f"{name}.pt"
            torch.save(
                {
                    "model": m.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                },
                path,
            )
            saved = torch.load(path, map_location="cpu", weights_only=True)
            m, optimizer, scheduler = fresh(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            scheduler.load_state_dict(saved["scheduler"])
            prepare_optimizer(optimizer, graphed)
            route = route_of(m, optimizer)
        rates.append(float(optimizer.param_groups[0]["lr"]))
        route.update(group, sum(b.target_tokens for b in group))
        scheduler.step()
    state = optimizer.state_dict()["state"]
    return rates, [p.detach().clone() for p in m.parameters()], state
