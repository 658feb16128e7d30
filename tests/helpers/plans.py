"""What Snakemake would rerun after a config change, read in-process from its own records.

Snakemake reruns a finished job when its inputs, its code or its recorded params change, and it
records only the params that are not computed from the input (``Job.non_derived_params``). A
setting that reaches a job only inside an input-derived param changes the command line but
reruns nothing. :func:`plan` builds the DAG of every job of a config (``--forceall``, nothing
run) and keeps what that comparison sees; :func:`reruns` names the rules whose jobs a change
would plan directly (the jobs after them follow from their outputs)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]

Plan = dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], tuple[str, ...]]]


def plan(configfile: Path) -> Plan:
    """Every job of the config's default target: (rule, outputs) → (recorded params, inputs)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
    )

    here = os.getcwd()
    with contextlib.redirect_stderr(io.StringIO()), SnakemakeApi(OutputSettings()) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=[Path(configfile)]),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )
        workflow_api.dag(DAGSettings(forceall=True))
        workflow = workflow_api._workflow
        workflow._prepare_dag(
            forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True
        )
        workflow._build_dag()
        out: Plan = {}
        for job in workflow.dag.jobs:
            params = tuple(map(str, workflow.persistence._params(job)))
            inputs = tuple(sorted(map(str, job.input)))
            out[(job.rule.name, tuple(sorted(map(str, job.output))))] = (params, inputs)
    os.chdir(here)
    return out


def reruns(before: Plan, after: Plan) -> set[str]:
    """The rules with a job that is new, or whose recorded params or inputs changed."""
    return {rule for (rule, outputs), seen in after.items() if before.get((rule, outputs)) != seen}


def _with(config: dict, changes: dict[str, object]) -> dict:
    out = copy.deepcopy(config)
    for dotted, value in changes.items():
        section, key = dotted.split(".")
        out.setdefault(section, {})[key] = value
    return out


def walk(configfile: Path, changes: list[dict]) -> dict[str, list[str]]:
    """Each change (``{"key": "train.lr", "value": 0.5, "base": {other keys}}``) against the
    config with its ``base`` keys set → the rules it would rerun. One process: Snakemake keeps
    global state (its logger) that a test process should not inherit."""
    config = yaml.safe_load(Path(configfile).read_text(encoding="utf-8"))
    folder = Path(configfile).parent
    plans: dict[str, Plan] = {}

    def plan_of(changed: dict) -> Plan:
        text = yaml.safe_dump(changed, sort_keys=True)
        if text not in plans:
            path = folder / f"walk{len(plans)}.yaml"
            path.write_text(text, encoding="utf-8")
            plans[text] = plan(path)
        return plans[text]

    out = {}
    for change in changes:
        before = _with(config, change.get("base", {}))
        after = _with(before, {change["key"]: change["value"]})
        out[change["key"]] = sorted(reruns(plan_of(before), plan_of(after)))
    return out


if __name__ == "__main__":
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    print(json.dumps(walk(Path(spec["config"]), spec["changes"])))
