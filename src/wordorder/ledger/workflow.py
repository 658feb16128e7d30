"""What the ledger's rules (workflow/rules/ledger.smk) pass to ``wordorder ledger-*``: the
settings that define a run, the named inputs of recording it, and the paths of its outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wordorder.ledger.record import run_name

#: The config sections a run's outputs depend on beside its model options and seed: training,
#: decoding, and the preparation of its inputs (their files' digests are checked when a run is
#: added, but a restored run's training inputs are not rebuilt, so their settings are compared).
SECTIONS = ("train", "decode", "clean", "subword", "preorder")
#: the per-test-set named inputs that are a run's outputs, not files it read
OUTPUTS = ("hyp", "tok", "benchmark")


def run_settings(config: Mapping[str, Any], model: Mapping[str, Any], seed: int) -> dict:
    """The settings a ledger run was made with: its record is restored only under equal ones."""
    return {"model": dict(model), "seed": seed, **{k: config.get(k) for k in SECTIONS}}


def no_checkpoint(name: str, ledger: str) -> str:
    """The input a ledger run's training would need, which never exists: Snakemake's "missing
    input" error then names it and says why a target that needs the run's model (a checkpoint,
    attention AER, head similarity, swap noise) cannot be made. (A path, not an exception: an
    input function that raises is reported for every candidate job, even where the ledger's
    rules make the file.)"""
    return (
        f"{ledger}/runs/{name}/no checkpoint - a ledger run is never trained again; ask for the "
        "tables (findings, BLEU), or git rm -r this folder to train it again"
    )


def _files(value: str | Sequence[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def ledger_inputs(
    metrics: str, train: Mapping[str, Any], tests: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The named inputs of recording a run (for Snakemake's ``unpack``): its metrics log, the
    files its training read (``train``: label -> path or paths), and per test set (in the
    order of ``tests``, by index) its translations, decoding benchmark, source, features and
    references."""
    named: dict[str, Any] = {"metrics": metrics}
    named.update({f"train_{k}": v for k, v in train.items() if _files(v)})
    for i, t in enumerate(tests):
        named.update({f"{k}_{i}": v for k, v in t.items() if _files(v)})
    return named


def ledger_spec(
    pair: str,
    variant: str,
    seed: int | str,
    named: Mapping[str, Any],
    testsets: Sequence[str],
    logs: str,
    threads: Mapping[str, Any],
) -> dict[str, Any]:
    """``wordorder ledger-add``'s ``--spec`` from the rule's named inputs: the files to digest
    (every training and test input, not the outputs), the metrics log, the job logs (not
    inputs: Snakemake keeps logs apart) and the translations per test set."""
    name = run_name(pair, variant, seed)
    outputs = {"metrics", *(f"{k}_{i}" for i in range(len(testsets)) for k in OUTPUTS)}
    inputs: dict[str, str] = {}
    for key, value in named.items():
        if key not in outputs:
            files = _files(value)
            inputs.update({f"{key}.{j}" if len(files) > 1 else key: f for j, f in enumerate(files)})
    return {
        "inputs": inputs,
        "metrics": str(named["metrics"]),
        "train_log": f"{logs}/train/{name}.log",
        "threads": {k: v for k, v in threads.items() if isinstance(v, int)},
        "translations": {
            t: {
                "hyp": str(named[f"hyp_{i}"]),
                "hyp_tok": str(named[f"tok_{i}"]),
                "benchmark": str(named[f"benchmark_{i}"]),
                "log": f"{logs}/translate/{name}.{t}.log",
            }
            for i, t in enumerate(testsets)
        },
    }
