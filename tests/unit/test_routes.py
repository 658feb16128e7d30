"""The update routes (:mod:`wordorder.train.routes`): chosen once from the options, one step
implementation, and the graphed route's bookkeeping on the CPU through a stand-in for CUDA
graphs (tests/helpers/graph_standin.py); an optimizer made ready after loading a saved state
(:func:`wordorder.train.update.prepare_optimizer`)."""

from __future__ import annotations

import copy
import inspect

import pytest
import torch
from graph_standin import ReplayedCalls
from reordering_task import VOCAB
from route_runs import plan_and_batches, run_with_resume

from wordorder import gpu_table
from wordorder.models import build_model
from wordorder.train import graphs, routes, step, update
from wordorder.train.options import TrainOptions
from wordorder.train.routes import choose_route, route_from_options
from wordorder.train.schedule import make_scheduler
from wordorder.train.update import make_optimizer, prepare_optimizer

CPU, CUDA = torch.device("cpu"), torch.device("cuda")


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(1)
    return build_model({"preset": "tiny", "dropout": 0.0}, VOCAB)


def test_the_route_is_chosen_once_from_the_options(model):
    opts = TrainOptions(device="cpu")
    assert choose_route(opts, CPU, model, 1, None) == "eager"  # stack_parameters auto: CUDA only
    assert choose_route(TrainOptions(stack_parameters=True), CPU, model, 1, None) == "stacked"
    # auto stacks on CUDA only where the route table says stacked updates passed on a GPU
    stacked_tried = gpu_table.tried("stacked", "bf16", "transformer")
    want = "stacked" if stacked_tried else "eager"
    assert choose_route(opts, CUDA, model, 1, torch.bfloat16) == want
    assert choose_route(TrainOptions(stack_parameters=True), CUDA, model, 1, None) == "stacked"
    assert choose_route(opts, CPU, model, 2, None) == "ddp"
    assert choose_route(TrainOptions(cuda_graphs=True), CUDA, model, 1, None) == "graphed"
    assert choose_route(TrainOptions(cuda_graphs="auto"), CPU, model, 1, None) == "eager"


def test_one_implementation_of_accumulation_clipping_and_the_step():
    """The routes share StepOps: clip_grad_norm_, the optimizer's step and zero_grad are each
    called in one place of the training code."""
    sources = {m.__name__: inspect.getsource(m) for m in (routes, graphs, step, update)}
    text = "\n".join(sources.values())
    for call in ("clip_grad_norm_(", ".step(self.optimizer)", "zero_grad(set_to_none"):
        assert text.count(call) == 1, call
    assert ").backward()" not in sources["wordorder.train.graphs"]  # StepOps.backward does it


def run_route(model, name, plan, backend=None, max_graphs=64):
    """Losses and final weights of ``plan`` through the route ``name`` (with its schedule)."""
    opts = TrainOptions(device="cpu", lr=1e-3, warmup=4, label_smoothing=0.1, clip_norm=0.5)
    model = copy.deepcopy(model).train()
    optimizer = make_optimizer(model, opts, capturable=name == "graphed")
    scheduler = make_scheduler(optimizer, opts)
    extra = {"backend": backend, "max_graphs": max_graphs} if name == "graphed" else {}
    route = route_from_options(name, model, optimizer, opts, CPU, **extra)
    losses = []
    for group in plan:
        loss, _ = route.update(group, sum(b.target_tokens for b in group))
        scheduler.step()
        losses.append(float(loss))
    return route, losses, [p.detach().clone() for p in model.parameters()]


def test_graphed_route_updates_equal_eager_updates_on_the_cpu(model):
    """Through the stand-in the graphed route runs the same operators as the eager one, so the
    two agree to rounding (clipping by the multi-tensor kernels, the loss scale a tensor): the
    rate reaches every replayed step, no update is missed or doubled."""
    plan = plan_and_batches()
    _, eager_losses, eager_weights = run_route(model, "eager", plan)
    backend = ReplayedCalls()
    route, losses, weights = run_route(model, "graphed", plan, backend)
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(eager_losses))
    # the weights as one vector: the gap between the runs against the eager run's path (element
    # by element Adam turns rounding noise of near-zero gradients into whole steps; a missed or
    # doubled update or a wrong rate moves the end point by 0.08-0.24 of the path: test_cuda.py)
    start = [p.detach() for p in model.parameters()]
    gap = sum(float((a - b).norm()) ** 2 for a, b in zip(weights, eager_weights)) ** 0.5
    path = sum(float((a - b).norm()) ** 2 for a, b in zip(eager_weights, start)) ** 0.5
    assert gap / path < 0.01, gap / path
    # two shapes captured (each on its second sighting), the step after one eager step
    assert route.shapes == 2 and route.step_graph is not None and backend.captures == 3
    # 12 micro-batches: each shape's first run eager (2), the rest replayed (10); steps: 10
    # updates, the first eager, the second captured and replayed with the other 8
    assert backend.replays == 10 + 9


def test_graphed_route_runs_eagerly_past_max_graphs(model):
    plan = plan_and_batches()
    backend = ReplayedCalls()
    route, losses, _ = run_route(model, "graphed", plan, backend, max_graphs=1)
    _, eager_losses, _ = run_route(model, "eager", plan)
    assert route.shapes == 1 and backend.captures == 2  # one shape and the step
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(eager_losses))


def test_graphed_route_needs_a_cuda_device_without_a_backend(model):
    from wordorder.errors import WordorderError

    optimizer = make_optimizer(model, TrainOptions(), capturable=True)
    with pytest.raises(WordorderError, match="needs a CUDA device"):
        route_from_options("graphed", model, optimizer, TrainOptions(), CPU)


def saved_state(model, capturable: bool) -> dict:
    """An optimizer state after one step, as resume reads it (onto the CPU)."""
    optimizer = make_optimizer(model, TrainOptions(lr=3e-4, warmup=0), capturable=capturable)
    for p in model.parameters():
        p.grad = torch.full_like(p, 0.01)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return copy.deepcopy(optimizer.state_dict())


@pytest.mark.parametrize("saved_capturable", [False, True])
@pytest.mark.parametrize("capturable", [False, True])
def test_a_loaded_optimizer_becomes_what_the_route_builds(model, saved_capturable, capturable):
    """Whatever run saved the state: a capturable optimizer's rate is a tensor on the
    parameters' device (the tensor the scheduler writes and a captured step reads), Adam's step
    counters too; otherwise the rate is a float. Steps then run and the schedule reaches them."""
    model = copy.deepcopy(model)
    state = saved_state(model, saved_capturable)
    optimizer = make_optimizer(model, TrainOptions(lr=3e-4, warmup=0), capturable=capturable)
    optimizer.load_state_dict(state)
    prepare_optimizer(optimizer, capturable)
    device = next(model.parameters()).device
    for group in optimizer.param_groups:
        assert group["capturable"] is capturable
        lr = group["lr"]
        if capturable:
            assert isinstance(lr, torch.Tensor) and lr.device == device
            steps = [optimizer.state[p]["step"] for p in group["params"]]
            assert all(s.device == device for s in steps)
        else:
            assert isinstance(lr, float)
    scheduler = make_scheduler(optimizer, TrainOptions(lr=3e-4, warmup=0, schedule="step_decay"))
    rate = optimizer.param_groups[0]["lr"]
    for p in model.parameters():
        p.grad = torch.full_like(p, 0.01)
    optimizer.step()
    scheduler.step()
    assert optimizer.param_groups[0]["lr"] is rate or not capturable  # written in place


def test_a_rate_read_onto_the_cpu_moves_to_the_parameters_device():
    """The frozen-rate resume of CUDA graphs, on a machine without a GPU: parameters on another
    device than the CPU (``meta``), the saved state read onto the CPU as resume reads it, with a
    rate tensor (a capturable run saved it). The rate and Adam's step counters must move to the
    parameters' device: one left on the CPU is read once into a captured step. (Before the fix,
    ``update.set_capturable`` only made a float rate a tensor: both stayed on the CPU.)"""
    cpu_param = torch.nn.Parameter(torch.zeros(3))
    saved = torch.optim.Adam([cpu_param], lr=torch.tensor(3e-4), foreach=False)
    cpu_param.grad = torch.ones(3)
    saved.step()
    state = copy.deepcopy(saved.state_dict())
    param = torch.nn.Parameter(torch.zeros(3, device="meta"))
    optimizer = torch.optim.Adam([param], lr=3e-4, capturable=True, foreach=False)
    optimizer.load_state_dict(state)
    assert optimizer.param_groups[0]["lr"].device.type == "cpu"  # what loading leaves
    prepare_optimizer(optimizer, capturable=True)
    assert optimizer.param_groups[0]["lr"].device.type == "meta"
    assert optimizer.state[param]["step"].device.type == "meta"


@pytest.mark.parametrize("name", ["eager", "stacked", "graphed"])
def test_a_resumed_run_equals_an_uninterrupted_one_on_every_route(model, name, tmp_path):
    """Kill-and-resume at update 5 of 10 (two shapes, accumulation, clipping, a warm-up): the
    same rates, read from the optimizer, and bitwise the same weights and Adam state."""
    plan = plan_and_batches()
    rates, weights, state = run_with_resume(model, name, plan, None, tmp_path)
    rates_r, weights_r, state_r = run_with_resume(model, name, plan, 5, tmp_path)
    assert rates_r == rates and len(set(rates)) > 4
    assert all(torch.equal(a, b) for a, b in zip(weights_r, weights))
    for k in state:
        for key in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(state_r[k][key].cpu(), state[k][key].cpu()), (k, key)
