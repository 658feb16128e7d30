"""Findings: does a paper's headline effect reproduce? One row per claim of ``evaluation.findings``.

A claim names a paper, a language pair and test set, the paper's system and its baseline, and
the BLEU difference the paper reports. The training run (seed) is the unit of replication
(docs/algorithms.md §SIG-SEEDS; the statistics are in :mod:`wordorder.evaluate.seed_stats`):

* each system's corpus test BLEU per run, its mean and its own sd over runs (runs of two
  systems are never paired: a seed number means nothing across architectures);
* our Δ = the difference of the run means, with a 95 % interval from a two-level bootstrap
  (runs, then sentences);
* p from the exact permutation test over the per-run scores (Welch's t when both systems have
  ≥ 8 runs), Holm-adjusted over the claims of the table, and the minimal detectable effect;
* with one run of each system no seed-level test exists: sacreBLEU's paired bootstrap over
  sentences (:func:`wordorder.evaluate.significance.bleu_paired_bootstrap`) gives the p, and
  the row says so instead of counting as a reproduction.

The verdicts are :func:`wordorder.evaluate.seed_stats.verdict`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wordorder.errors import WordorderError
from wordorder.evaluate import seed_stats
from wordorder.io import atomic_open


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


def _bleu_stats(hyps: Sequence[str], refs: Sequence[Sequence[str]], metric: Any) -> np.ndarray:
    """[N, K] per-sentence sufficient statistics, as sacreBLEU keeps them."""
    return np.array(
        metric._extract_corpus_statistics(list(hyps), [list(r) for r in refs]), dtype=np.int64
    )


def bleu_scorer(metric: Any) -> Callable[[np.ndarray], np.ndarray]:
    """[..., K] summed statistics -> [...] corpus BLEU, by sacreBLEU's own formula."""

    def score(totals: np.ndarray) -> np.ndarray:
        flat = totals.reshape(-1, totals.shape[-1])
        out = [metric._compute_score_from_stats(row.tolist()).score for row in flat]
        return np.array(out, dtype=float).reshape(totals.shape[:-1])

    return score


def _summary(scores: np.ndarray) -> tuple[float, float | None]:
    return float(scores.mean()), float(scores.std(ddof=1)) if len(scores) > 1 else None


def compare_runs(
    system: Sequence[Sequence[str]],
    baseline: Sequence[Sequence[str]],
    refs: Sequence[Sequence[str]],
    tokenize: str = "13a",
    lowercase: bool = False,
    samples: int = 1000,
    seed: int = seed_stats.SEED,
    brevity: str = "closest",
) -> dict[str, Any]:
    """Everything of one claim but Holm's p and the verdict (which need the whole table).

    Args:
        system, baseline: [runs][N] hypotheses, one list per training run; the two systems
            may have different numbers of runs.
        refs: [R][N] references (one list per reference).
        samples: draws of the two-level bootstrap (and of the single-run paired bootstrap).
        brevity: BLEU's reference-length rule, ``closest`` or ``shortest``
            (:mod:`wordorder.evaluate.bleu`).
    """
    from wordorder.evaluate.bleu import bleu_metric
    from wordorder.evaluate.significance import bleu_paired_bootstrap

    if not system or not baseline:
        raise WordorderError(
            f"{len(system)} runs of the system and {len(baseline)} of the baseline",
            hint="a finding needs at least one run of each system",
        )
    n = len(refs[0])
    if any(len(h) != n for h in (*system, *baseline, *refs)):
        raise WordorderError(
            "the outputs of a finding have different numbers of lines",
            hint="compare outputs of the same test set",
        )
    metric = bleu_metric(tokenize, lowercase, brevity)
    stats_a = np.stack([_bleu_stats(h, refs, metric) for h in system])
    stats_b = np.stack([_bleu_stats(h, refs, metric) for h in baseline])
    score = bleu_scorer(metric)
    a, b = score(stats_a.sum(1)), score(stats_b.sum(1))
    (mean_a, sd_a), (mean_b, sd_b) = _summary(a), _summary(b)
    delta = mean_a - mean_b
    ci = seed_stats.ci95(seed_stats.two_level_bootstrap(stats_a, stats_b, score, samples, seed))
    perm = seed_stats.permutation_test(a, b)
    welch = seed_stats.welch(a, b) if min(len(a), len(b)) >= 2 else None
    sd = seed_stats.pooled_sd(a, b)
    seed_level = len(a) + len(b) > 2
    floor = 0.0
    if seed_level:
        p, test = seed_stats.seed_level_p(a, b)
        if test != "Welch":
            floor = seed_stats.permutation_floor(len(a), len(b))
    else:  # one run each: only the test sentences can be resampled
        bs = bleu_paired_bootstrap(
            system[0], baseline[0], refs[0], tokenize, samples, refs[1:], lowercase, brevity
        )
        p, test = bs["p"], "paired bootstrap, one run"
    return {
        "system_scores": a.tolist(),
        "baseline_scores": b.tolist(),
        "system_mean": mean_a,
        "system_sd": sd_a,
        "system_runs": len(a),
        "baseline_mean": mean_b,
        "baseline_sd": sd_b,
        "baseline_runs": len(b),
        "delta": delta,
        "ci": list(ci),
        "p": p,
        "test": test,
        "seed_level": seed_level,
        "p_floor": floor,
        "p_permutation": perm.p,
        "permutation_exact": perm.exact,
        "permutation_relabelings": perm.relabelings,
        "p_welch": welch.p if welch else None,
        "welch_df": welch.df if welch else None,
        "pooled_sd": sd,
        "mde": seed_stats.mde(sd, len(a), len(b)) if sd is not None and seed_level else None,
        "samples": samples,
    }


def judge(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows with Holm's adjusted p over all of them (one table, one family, whatever each
    row's test) and their verdicts."""
    adjusted = seed_stats.holm([r["p"] for r in rows])
    return [
        {
            **r,
            "p_holm": q,
            "verdict": seed_stats.verdict(
                r["paper_delta"],
                r["delta"],
                q,
                tuple(r["ci"]),
                r["mde"],
                r["seed_level"],
                r.get("p_floor", 0.0),
            ),
        }
        for r, q in zip(rows, adjusted)
    ]


def _bleu(mean: float, sd: float | None, n: int) -> str:
    return f"{mean:.2f} ± {sd:.2f} ({n})" if sd is not None else f"{mean:.2f} ({n})"


_TEST_TAGS = {
    "exact permutation": "perm.",
    "Monte Carlo permutation": "perm. MC",
    "Welch": "Welch",
    "paired bootstrap, one run": "1-run bootstrap",
}


def findings_markdown(rows: Sequence[Mapping[str, Any]], title: str) -> str:
    """The findings table, and a footnote saying what each column is."""
    lines = [
        f"# {title}",
        "",
        "| paper | pair / test set | comparison | paper Δ | system BLEU (mean ± sd, n) "
        "| baseline BLEU (mean ± sd, n) | our Δ | 95 % CI | p | Holm p | MDE | verdict |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        what = f" ({r['what']})" if r.get("what") else ""
        mde = f"{r['mde']:.2f}" if r["mde"] is not None else "—"
        lines.append(
            f"| {r['paper']} | {r['pair']} / {r['testset']} | {r['system']} vs "
            f"{r['baseline']}{what} | {r['paper_delta']:+.2f} "
            f"| {_bleu(r['system_mean'], r['system_sd'], r['system_runs'])} "
            f"| {_bleu(r['baseline_mean'], r['baseline_sd'], r['baseline_runs'])} "
            f"| {r['delta']:+.2f} | [{r['ci'][0]:+.2f}, {r['ci'][1]:+.2f}] "
            f"| {r['p']:.3f} ({_TEST_TAGS.get(r['test'], r['test'])}) | {r['p_holm']:.3f} "
            f"| {mde} | {r['verdict']} |"
        )
    samples = rows[0]["samples"] if rows else 1000
    alpha = seed_stats.ALPHA
    lines += [
        "",
        "The training run (seed) is the unit: each system's corpus BLEU per run (sacreBLEU), "
        "its mean, its own sd over runs (ddof 1) and n runs; runs of the two systems are never "
        "paired. Our Δ: system mean − baseline mean. 95 % CI: 2.5 / 97.5 percentiles of a "
        f"two-level bootstrap ({samples} draws: the runs of each system resampled, then the test "
        "sentences, one index set for every run of a draw). p: two-sided; *perm.* the exact "
        "permutation test over the per-run scores (3 runs each cannot go below 0.1), *perm. MC* "
        f"the same over {seed_stats.MC_RELABELINGS:,} random relabelings, *Welch* Welch's t "
        f"(both systems with ≥ {seed_stats.WELCH_MIN_RUNS} runs), *1-run bootstrap* sacreBLEU's "
        "paired bootstrap over sentences where each system has one run: it ignores run-to-run "
        "variance, and its verdict says so. Holm p: Holm–Bonferroni over the table's rows. MDE: "
        f"the Δ detected with 80 % power at α {alpha} (two-sided) given the pooled run sd and the "
        "runs, (z₀.₉₇₅ + z₀.₈)·sd·√(1/n_sys + 1/n_base). Verdict, at Holm p < "
        f"{alpha}: *reproduced* (the paper's sign, its Δ inside the CI), *same sign, "
        "smaller/larger* (its Δ outside the CI), *opposite* (the other sign); otherwise "
        "*not detected*, or *not detectable* where the runs cannot give p < "
        f"{alpha} at all (3 + 3 runs: p ≥ 0.1), whatever the MDE. A paper Δ of 0 claims no "
        "direction: *difference found* or *no difference detected*.",
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
    CPU-hours) as Markdown and JSON (with every run's score)."""
    from wordorder.evaluate.cost import cost_markdown

    with atomic_open(md_path) as f:
        f.write(findings_markdown(rows, title) + ("\n" + cost_markdown(cost) if cost else ""))
    with atomic_open(json_path) as f:
        json.dump({"findings": list(rows), "cost": cost}, f, indent=1)
