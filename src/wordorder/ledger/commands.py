"""The ledger's subcommands of ``wordorder`` (the rules of workflow/rules/ledger.smk):
``ledger-add`` records a finished run, ``ledger-restore`` puts a recorded run's outputs where the
DAG expects them; registered by :mod:`wordorder.cli`."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path


def cmd_ledger_add(a: argparse.Namespace) -> None:
    from wordorder.io import write_json
    from wordorder.ledger.record import Run, Translation, add_run

    spec = a.spec

    def path(x: str | None) -> Path | None:
        return Path(x) if x else None

    run = Run(
        pair=a.pair,
        variant=a.variant,
        seed=a.seed,
        config=a.config,
        inputs={k: Path(v) for k, v in spec["inputs"].items()},
        metrics=Path(spec["metrics"]),
        train_log=path(spec.get("train_log")),
        translations={
            t: Translation(
                Path(x["hyp"]), Path(x["hyp_tok"]), path(x.get("benchmark")), path(x.get("log"))
            )
            for t, x in spec["translations"].items()
        },
        threads={k: int(v) for k, v in spec.get("threads", {}).items()},
    )
    record = add_run(Path(a.ledger), a.experiment, Path(a.root), run)
    summary = {
        "run": run.name,
        "ledger": a.ledger,
        "commit": record["provenance"]["commit"],
        "inputs": len(record["inputs"]),
        "files": record["files"],
    }
    write_json(a.output, summary)
    print(json.dumps(summary, indent=1))


def cmd_ledger_restore(a: argparse.Namespace) -> None:
    from wordorder.errors import WordorderError
    from wordorder.ledger.record import run_name
    from wordorder.ledger.restore import restore_training, restore_translation

    name = run_name(a.pair, a.variant, a.seed)
    log_dir = Path(a.log_dir) if a.log_dir else None
    if a.metrics:
        restore_training(Path(a.ledger), name, a.config, Path(a.metrics), log_dir)
    elif a.testset and a.hyp and a.hyp_tok:
        restore_translation(
            Path(a.ledger),
            name,
            a.config,
            a.testset,
            Path(a.hyp),
            Path(a.hyp_tok),
            Path(a.benchmark) if a.benchmark else None,
            log_dir,
            {f"ref{i}": Path(p) for i, p in enumerate(a.reference)},
            Path(a.root) if a.root else None,
        )
    else:
        raise WordorderError(
            "nothing to restore", hint="give --metrics, or --testset with --hyp and --hyp-tok"
        )
    print(f"restored {name} from {a.ledger}")


def cmd_ledger_input(a: argparse.Namespace) -> None:
    from wordorder.ledger.restore import restore_input

    restore_input(Path(a.ledger), a.key, Path(a.output))
    print(f"restored {a.key} from {a.ledger}")


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the ledger's subcommands; ``add(name, func, help)`` makes one subparser."""

    def run_arguments(s: argparse.ArgumentParser) -> None:
        s.add_argument("--ledger", required=True, help="the ledger folder")
        s.add_argument("--pair", required=True)
        s.add_argument("--variant", required=True)
        s.add_argument("--seed", type=int, required=True)
        s.add_argument(
            "--config", type=_json, required=True, help="the settings that define the run"
        )

    s = add("ledger-add", cmd_ledger_add, "record a finished run in the experiment's ledger")
    run_arguments(s)
    s.add_argument("--experiment", required=True)
    s.add_argument("--root", required=True, help="the experiment's results folder")
    s.add_argument(
        "--spec",
        type=_json,
        required=True,
        help='{"inputs": {label: path}, "metrics", "train_log", "threads", "translations": '
        '{testset: {"hyp", "hyp_tok", "benchmark", "log"}}}',
    )
    s.add_argument("--output", required=True, help="a JSON note that the run was recorded")

    s = add("ledger-restore", cmd_ledger_restore, "restore a ledger run's outputs")
    run_arguments(s)
    s.add_argument("--metrics", help="restore the metrics log here")
    s.add_argument("--testset")
    s.add_argument("--hyp")
    s.add_argument("--hyp-tok")
    s.add_argument("--benchmark")
    s.add_argument("--reference", nargs="*", default=[], help="the test set's references")
    s.add_argument("--root", help="the experiment's results folder (names the references)")
    s.add_argument("--log-dir", help="where the run's job logs go (counted by the cost table)")

    s = add("ledger-input", cmd_ledger_input, "restore an input the ledger's runs read")
    s.add_argument("--ledger", required=True, help="the ledger folder")
    s.add_argument("--key", required=True, help="the input's name in the manifest")
    s.add_argument("--output", required=True)
