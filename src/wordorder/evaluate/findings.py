"""Findings: does a paper's headline effect reproduce? One row per claim of ``evaluation.findings``.

A claim names a paper, a language pair and test set, the paper's system and its baseline, and
the BLEU difference the paper reports. The training run (seed) is the unit of replication
(docs/algorithms.md §SIG-SEEDS; the statistics are in :mod:`wordorder.evaluate.seed_stats`):

* each system's corpus test BLEU per run, its mean and its own sd over runs (runs of two
  systems are never paired: a seed number means nothing across architectures);
* our Δ = the difference of the run means, with Welch's t interval over the run means plus
  the test-sentence sampling variance added once (:mod:`wordorder.evaluate.seed_interval`;
  the two-level bootstrap's interval is reported beside it);
* p from Welch's t-test over the per-run scores (the permutation test of Welch's t reported
  beside it; with a single run of one system the permutation test decides), Holm-adjusted over
  the claims of its family (primary: the pre-registered comparisons; secondary: further
  analyses, corrected on their own), the minimal detectable effect by t at α/m, and our Δ / the
  paper's Δ with its interval;
* a claim with ``min_source_words`` is judged on the test sentences whose tokenized source has
  at least that many words (:func:`long_sentences`: the papers find word-order gains on long
  sentences, Kawara 2021 §VI-D);
* with one run of each system no seed-level test exists: sacreBLEU's paired bootstrap over
  sentences (:func:`wordorder.evaluate.significance.bleu_paired_bootstrap`) gives the p, and
  the row says so instead of counting as a reproduction.

The verdicts are :func:`wordorder.evaluate.verdicts.verdict`'s; the table is written by
:mod:`wordorder.evaluate.findings_table`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wordorder.errors import WordorderError
from wordorder.evaluate import blocks, power, seed_interval, seed_stats, verdicts
from wordorder.evaluate.findings_table import findings_markdown, write_findings  # noqa: F401


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
    family: str = "primary"
    min_source_words: int | None = None
    paired: bool = False  # a block design: run s of each system paired (blocks.py)

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
            family=str(d.get("family") or "primary"),
            min_source_words=int(d["min_source_words"]) if d.get("min_source_words") else None,
            paired=bool(d.get("paired", False)),
        )


def long_sentences(source: Sequence[str], min_words: int, lines: int) -> list[int]:
    """The indices of the test sentences whose tokenized source has at least ``min_words``
    words (whitespace tokens of the tokenizer's output, the unit of the length tables);
    ``lines``: the test set's, which the source must have."""
    if len(source) != lines:
        raise WordorderError(
            f"the tokenized source has {len(source)} lines, the test set {lines}",
            hint="a length subset is cut by the test set's own tokenized source",
        )
    keep = [i for i, line in enumerate(source) if len(line.split()) >= min_words]
    if not keep:
        raise WordorderError(
            f"no test sentence has {min_words} source words or more",
            hint="lower min_source_words, or judge the claim on a test set of longer sentences",
        )
    return keep


def matched_runs(
    claim: Mapping[str, Any],
) -> tuple[list[str], list[str], list[int]]:
    """A paired claim's hypothesis files, run s of the system beside run s of the baseline:
    the seeds both systems have, in the system's order (a block one system lacks is left out).
    -> (system files, baseline files, seeds)."""
    sys_seeds, base_seeds = list(claim["system_seeds"]), list(claim["baseline_seeds"])
    seeds = [s for s in sys_seeds if s in base_seeds]
    return (
        [claim["system_hyps"][sys_seeds.index(s)] for s in seeds],
        [claim["baseline_hyps"][base_seeds.index(s)] for s in seeds],
        seeds,
    )


def keep_lines(outputs: Sequence[Sequence[str]], keep: Sequence[int]) -> list[list[str]]:
    """Each output (a run's translations, a reference) restricted to the sentences ``keep``."""
    return [[lines[i] for i in keep] for lines in outputs]


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
    paired: bool = False,
) -> dict[str, Any]:
    """Everything of one claim but Holm's p and the verdict (which need the whole table).

    Args:
        system, baseline: [runs][N] hypotheses, one list per training run; the two systems
            may have different numbers of runs.
        refs: [R][N] references (one list per reference).
        samples: draws of the two-level bootstrap (and of the single-run paired bootstrap).
        brevity: BLEU's reference-length rule, ``closest`` or ``shortest``
            (:mod:`wordorder.evaluate.bleu`).
        paired: run s of the system and of the baseline form block s (equal run counts):
            the paired t over the blocks is the test, with its interval and MDE
            (:mod:`wordorder.evaluate.blocks`).
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
    draws = seed_interval.run_score_draws(stats_a, stats_b, score, samples, seed)
    ci_boot = seed_interval.ci95(seed_interval.resample_runs(draws, len(a), seed))
    sentence_var = float(seed_interval.sentence_variance(np.cov(draws, rowvar=False), len(a)))
    perm = seed_stats.permutation_test(a, b)
    welch = seed_stats.welch(a, b) if min(len(a), len(b)) >= 2 else None
    sd = seed_stats.pooled_sd(a, b)
    seed_level = len(a) + len(b) > 2
    if welch is not None:
        lo, hi = seed_interval.welch_interval(
            mean_a,
            float(np.var(a, ddof=1)),
            len(a),
            mean_b,
            float(np.var(b, ddof=1)),
            len(b),
            sentence_var,
        )
        ci, ci_method = (float(lo), float(hi)), "Welch + sentences"
    else:  # no run variance on one side: the bootstrap's interval is all there is
        ci, ci_method = ci_boot, "two-level bootstrap"
    if seed_level:
        p, test = seed_stats.seed_level_p(a, b)
        floor = seed_stats.test_floor(len(a), len(b))
    else:  # one run each: only the test sentences can be resampled
        bs = bleu_paired_bootstrap(
            system[0], baseline[0], refs[0], tokenize, samples, refs[1:], lowercase, brevity
        )
        p, test, floor = bs["p"], "paired bootstrap, one run", 0.0
    row = {
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
        "ci_method": ci_method,
        "ci_bootstrap": list(ci_boot),
        "sentence_sd": sentence_var**0.5,
        "p": p,
        "test": test,
        "seed_level": seed_level,
        "p_floor": floor,
        "p_permutation": perm.p,
        "permutation_exact": perm.exact,
        "permutation_relabelings": perm.relabelings,
        "permutation_statistic": perm.statistic,
        "p_welch": welch.p if welch else None,
        "welch_df": welch.df if welch else None,
        "pooled_sd": sd,
        # at α for one claim; judge() gives it at α/m for the m claims of the row's family
        "mde": _mde(sd_a, len(a), sd_b, len(b), sd, 1) if seed_level else None,
        "samples": samples,
        "sentences": n,
        "paired": False,
    }
    return _paired(row, a, b, sentence_var) if paired else row


def _paired(row: dict[str, Any], a: np.ndarray, b: np.ndarray, sentence_var: float) -> dict:
    """The row of a block design: p, interval and MDE of the paired t over the blocks (the
    unpaired Welch figures stay in p_welch and ci_unpaired)."""
    result = blocks.paired_t(a, b)
    ci = blocks.paired_interval(result, sentence_var)
    return {
        **row,
        "paired": True,
        "p": result.p,
        "test": f"paired t over {result.n} blocks",
        "p_floor": 0.0,
        "ci_unpaired": row["ci"],
        "ci": list(ci),
        "ci_method": "paired t + sentences",
        "difference_sd": result.sd,
        "block_differences": (a - b).tolist(),
        "mde": blocks.paired_mde(result.sd, result.n) if result.sd > 0 else None,
    }


def _mde(
    sd_a: float | None, n_a: int, sd_b: float | None, n_b: int, pooled: float | None, claims: int
) -> float | None:
    """Welch's MDE from each system's sd where both have 2 runs, else the one-sd MDE from the
    pooled sd; None without any spread estimate."""
    if sd_a is not None and sd_b is not None:
        return power.mde_welch(sd_a, n_a, sd_b, n_b, claims=claims)
    return None if pooled is None else power.mde(pooled, n_a, n_b, claims=claims)


def judge(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows, in their order, with Holm's adjusted p over the rows of their family (whatever
    each row's test) and their verdicts. The primary family is the pre-registered set of
    comparisons; a secondary analysis is corrected on its own, so adding one costs the primary
    claims no power (and a secondary row is read as such)."""
    adjusted, claims = [0.0] * len(rows), [1] * len(rows)
    for family in {r.get("family", "primary") for r in rows}:
        members = [i for i, r in enumerate(rows) if r.get("family", "primary") == family]
        for i, q in zip(members, seed_stats.holm([rows[i]["p"] for i in members])):
            adjusted[i], claims[i] = q, len(members)
    judged = []
    for r, q, m in zip(rows, adjusted, claims):
        mde = r["mde"]
        runs = (r["system_runs"], r["baseline_runs"])
        if r.get("paired"):
            sd_d = r["difference_sd"]
            mde = blocks.paired_mde(sd_d, runs[0], claims=m) if sd_d > 0 else None
        elif r["seed_level"]:
            # At α/m, Holm's first step: the rows are judged after the correction, so the
            # effect they could have missed is the one at the corrected level.
            mde = _mde(
                r.get("system_sd"), runs[0], r.get("baseline_sd"), runs[1], r.get("pooled_sd"), m
            )
        sd = r.get("pooled_sd")
        needed = None
        if r.get("paired") and r["paper_delta"] and r["difference_sd"] > 0:
            needed = blocks.blocks_for_power(r["paper_delta"], r["difference_sd"], claims=m)
        elif r["paper_delta"] and sd is not None:
            needed = power.runs_for_power(r["paper_delta"], sd, m)
        verdict = verdicts.verdict(
            r["paper_delta"],
            r["delta"],
            q,
            (r["ci"][0], r["ci"][1]),
            mde,
            r["seed_level"],
            r.get("p_floor", 0.0),
            claims=m,
            runs=runs,
            needed=needed,
        )
        size = verdicts.ratio(r["delta"], (r["ci"][0], r["ci"][1]), r["paper_delta"])
        judged.append(
            {
                **r,
                "p_holm": q,
                "claims": m,
                "mde": mde,
                "runs_needed": needed,
                "ratio": size[0] if size else None,
                "ratio_ci": list(size[1]) if size else None,
                "verdict": verdict,
            }
        )
    return judged
