"""Findings: does a paper's headline effect reproduce? One row per claim of ``evaluation.findings``.

A claim names a paper, a language pair and test set, the paper's system and its baseline, and
the BLEU difference the paper reports. Ours is the difference of the mean BLEU over seeds, with
its standard deviation over seeds (seed s of the system against seed s of the baseline), and a
p-value from a **seed-paired bootstrap**: every draw resamples the test sentences once, with
the same indices for every seed of both systems, and the statistic is the difference of the
seed-mean BLEUs. With one seed this is sacreBLEU's paired bootstrap exactly (the same draws,
statistic and p = (1 + #{|d_b| − mean|d| > |Δ|}) / (B + 1)); with several it asks whether the
systems differ beyond what both test-set sampling and the seeds' spread allow.

The verdict: *reproduced* (same sign as the paper, p < 0.05), *opposite* (the other sign,
p < 0.05) or *not significant*.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wordorder.errors import WordorderError
from wordorder.io import atomic_open

ALPHA = 0.05


@dataclass(frozen=True)
class Claim:
    """A paper's reported effect: ``system`` minus ``baseline`` =
    ``paper_delta`` BLEU on its data."""

    paper: str
    pair: str
    testset: str
    system: str
    baseline: str
    paper_delta: float
    what: str = ""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Claim:
        return cls(
            paper=str(d["paper"]),
            pair=str(d["pair"]),
            testset=str(d["testset"]),
            system=str(d["system"]),
            baseline=str(d["baseline"]),
            paper_delta=float(d["paper_delta"]),
            what=str(d.get("what", "")),
        )


def _bleu_stats(hyps: Sequence[str], refs: Sequence[Sequence[str]], metric) -> np.ndarray:
    """[N, K] float32 per-sentence sufficient statistics, as sacreBLEU keeps them."""
    return np.array(
        metric._extract_corpus_statistics(list(hyps), [list(r) for r in refs]), dtype="float32"
    )


def seed_paired_bootstrap(
    system: Sequence[Sequence[str]],
    baseline: Sequence[Sequence[str]],
    refs: Sequence[Sequence[str]],
    tokenize: str = "13a",
    lowercase: bool = False,
    samples: int = 1000,
    seed: int | None = None,
) -> dict:
    """Seed-paired bootstrap of the BLEU difference between two systems.

    Args:
        system, baseline: [S][N] hypotheses, one list per seed (seed s of each is paired).
        refs: [R][N] references (one list per reference).
        seed: the draws' RNG seed; default ``SACREBLEU_SEED`` or 12345, as sacreBLEU.

    Returns:
        ``{"delta", "sd", "per_seed", "p", "samples"}``: the difference of seed-mean BLEUs, the
        standard deviation of the per-seed differences (0 for one seed), the per-seed
        differences, and the p-value.
    """
    from sacrebleu.metrics import BLEU

    if not system or len(system) != len(baseline):
        raise WordorderError(
            f"{len(system)} seeds of the system but {len(baseline)} of the baseline",
            hint="a finding compares the same seeds of both systems",
        )
    n = len(refs[0])
    if any(len(h) != n for h in (*system, *baseline)):
        raise WordorderError(
            "the outputs of a finding have different numbers of lines",
            hint="compare outputs of the same test set",
        )
    metric = BLEU(tokenize=tokenize, lowercase=lowercase)
    sys_stats = [_bleu_stats(h, refs, metric) for h in system]
    base_stats = [_bleu_stats(h, refs, metric) for h in baseline]

    def score(stats: np.ndarray) -> float:
        return metric._compute_score_from_stats(stats.sum(0)).score

    per_seed = np.array([score(s) - score(b) for s, b in zip(sys_stats, base_stats)])
    delta = float(np.mean([score(s) for s in sys_stats]) - np.mean([score(b) for b in base_stats]))
    if seed is None:
        seed = int(os.environ.get("SACREBLEU_SEED", "12345"))
    idxs = np.random.default_rng(seed).choice(n, size=(samples, n), replace=True)
    draws_sys = np.array([[score(s[i]) for s in sys_stats] for i in idxs]).mean(1)
    draws_base = np.array([[score(b[i]) for b in base_stats] for i in idxs]).mean(1)
    diffs = np.abs(draws_sys - draws_base)
    count = int(np.sum(diffs - diffs.mean() > abs(delta)))
    p = (count + 1) / (samples + 1)
    if delta == 0 or all(list(a) == list(b) for a, b in zip(system, baseline)):
        # sacreBLEU would give 1/(B + 1) when every draw differs by the same amount (e.g. both
        # systems at BLEU 0): with no observed difference there is nothing to test
        p = 1.0
    return {
        "delta": delta,
        "sd": float(per_seed.std(ddof=1)) if len(per_seed) > 1 else 0.0,
        "per_seed": per_seed.tolist(),
        "p": p,
        "samples": samples,
    }


def verdict(paper_delta: float, delta: float, p: float, alpha: float = ALPHA) -> str:
    """*reproduced*, *opposite* or *not significant* (a paper delta of 0 claims no direction)."""
    if p >= alpha or delta == 0:
        return "not significant"
    return "reproduced" if np.sign(delta) == np.sign(paper_delta) else "opposite"


def findings_markdown(rows: Sequence[Mapping[str, Any]], title: str) -> str:
    """The findings table: paper, comparison, the paper's Δ, ours (mean ± sd
    over seeds), p, verdict."""
    lines = [
        f"# {title}",
        "",
        (
            "| paper | pair / test set | comparison | paper Δ BLEU "
            "| our Δ BLEU (mean ± sd) | seeds | p | verdict |"
        ),
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        what = f" ({r['what']})" if r.get("what") else ""
        lines.append(
            f"| {r['paper']} | {r['pair']} / {r['testset']} | {r['system']} vs "
            f"{r['baseline']}{what} | {r['paper_delta']:+.2f} | {r['delta']:+.2f} ± {r['sd']:.2f} "
            f"| {r['seeds']} | {r['p']:.3f} | {r['verdict']} |"
        )
    lines += [
        "",
        "p: seed-paired bootstrap (sacreBLEU's paired bootstrap, with every seed of both systems "
        f"resampled on the same sentences; {rows[0]['samples'] if rows else 1000} draws). "
        f"Reproduced: the paper's sign at p < {ALPHA}; opposite: the other sign at p < {ALPHA}.",
    ]
    return "\n".join(lines) + "\n"


def write_findings(
    rows: Sequence[Mapping[str, Any]],
    md_path: Path,
    json_path: Path,
    title: str,
    cost: Mapping[str, Any] | None = None,
) -> None:
    """The table (and, given the experiment's cost, a line on its
    CPU-hours) as Markdown and JSON."""
    from wordorder.evaluate.cost import cost_markdown

    with atomic_open(md_path) as f:
        f.write(findings_markdown(rows, title) + ("\n" + cost_markdown(cost) if cost else ""))
    with atomic_open(json_path) as f:
        json.dump({"findings": list(rows), "cost": cost}, f, indent=1)
