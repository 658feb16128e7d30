"""The findings table (:mod:`wordorder.evaluate.findings`) as Markdown and JSON: one row per
claim, one section per family of claims (Holm's adjustment spans a family), and a footnote that
says what every column is, so the table can be read without the code."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wordorder.evaluate import seed_stats
from wordorder.io import atomic_open

# Holm's adjustment spans one family; in this order. "sensitivity": a pre-registered second
# analysis of primary claims (e.g. a block design's paired test), read beside them, not instead.
FAMILIES = ("primary", "sensitivity", "secondary")


def _bleu(mean: float, sd: float | None, n: int) -> str:
    return f"{mean:.2f} ± {sd:.2f} ({n})" if sd is not None else f"{mean:.2f} ({n})"


_TEST_TAGS = {
    "exact permutation": "perm.",
    "Monte Carlo permutation": "perm. MC",
    "Welch": "Welch",
    "paired bootstrap, one run": "1-run bootstrap",
}


_HEADER = [
    "| paper | pair / test set | comparison | paper Δ | system BLEU (mean ± sd, n) "
    "| baseline BLEU (mean ± sd, n) | our Δ | 95 % CI | our Δ / paper Δ | p | Holm p | MDE "
    "| verdict |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
]
_SECTIONS = {
    "primary": "Primary comparisons (pre-registered)",
    "sensitivity": "Sensitivity analyses of the primary comparisons (pre-registered)",
    "secondary": "Secondary analyses",
}


def _cell(text: str) -> str:
    """Free text in a table cell: a "|" would end the cell and a line break the row."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _row(r: Mapping[str, Any]) -> str:
    what = f" ({_cell(r['what'])})" if r.get("what") else ""
    subset = ""
    if r.get("min_source_words"):
        subset = f" (source ≥ {r['min_source_words']} words: {r['sentences']:,} sentences)"
    mde = f"{r['mde']:.2f}" if r["mde"] is not None else "—"
    size = "—"
    if r.get("ratio") is not None:
        size = f"{r['ratio']:.2f} [{r['ratio_ci'][0]:.2f}, {r['ratio_ci'][1]:.2f}]"
    test = _TEST_TAGS.get(r["test"], r["test"].replace(" over ", ", "))
    return (
        f"| {_cell(r['paper'])} | {r['pair']} / {r['testset']}{subset} | {r['system']} vs "
        f"{r['baseline']}{what} | {r['paper_delta']:+.2f} "
        f"| {_bleu(r['system_mean'], r['system_sd'], r['system_runs'])} "
        f"| {_bleu(r['baseline_mean'], r['baseline_sd'], r['baseline_runs'])} "
        f"| {r['delta']:+.2f} | [{r['ci'][0]:+.2f}, {r['ci'][1]:+.2f}] | {size} "
        f"| {r['p']:.3f} ({test}) | {r['p_holm']:.3f} "
        f"| {mde} | {r['verdict']} |"
    )


def findings_markdown(
    rows: Sequence[Mapping[str, Any]],
    title: str,
    unjudged: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The findings table (one section per family where the rows have more than one), and a
    footnote saying what each column is; the claims of the config this run cannot judge
    (``unjudged``, each with its ``reason``) are listed after it."""
    lines = [f"# {title}", ""]
    if not rows:
        return "\n".join([*lines, "No claim of the config can be judged by this run.", ""]) + (
            _unjudged(unjudged)
        )
    families = [f for f in FAMILIES if any(r.get("family", "primary") == f for r in rows)]
    for family in families if len(families) > 1 else [None]:
        members = [r for r in rows if family in (None, r.get("family", "primary"))]
        if family:
            count = f"{len(members)} row" + "s" * (len(members) != 1)
            lines += [f"## {_SECTIONS[family]}: Holm over its {count}", ""]
        lines += [*_HEADER, *(_row(r) for r in members), ""]
    one = families[0] if families else "primary"
    holm = (
        "Holm–Bonferroni within each family, over the rows of its section: the primary family is "
        "the pre-registered set of comparisons; a sensitivity or secondary family is corrected "
        "on its own. "
        if len(families) > 1
        else f"Holm–Bonferroni over the table's rows (one family: {one}). "
    )
    subsets = any(r.get("min_source_words") for r in rows)
    samples = rows[0]["samples"] if rows else 1000
    alpha = seed_stats.ALPHA
    lines += [
        "The training run (seed) is the unit: each system's corpus BLEU per run (sacreBLEU), "
        "its mean, its own sd over runs (ddof 1) and n runs; runs of the two systems are "
        "paired only in a *paired t, n blocks* row (a block design: run s of each system, the "
        "same seed, trained side by side; the paired t over the blocks' differences, df "
        "blocks − 1, its CI and MDE likewise). Our Δ: system mean − baseline mean. 95 % CI: "
        "Welch's t interval over the run "
        "means with the test-sentence sampling variance added once (the part the runs of a "
        f"system share, from a {samples}-draw bootstrap of the sentences with every run kept), "
        "df min(n_sys, n_base) − 1 raised for the sentence term; with a single run of a system "
        "the percentiles of a two-level bootstrap (runs, then sentences). Our Δ / paper Δ: the "
        "size beside the paper's, with the CI divided by the paper's Δ (the papers' data and "
        "models differ, so it judges nothing). p: two-sided; *Welch* Welch's t over the per-run "
        "scores with Hsu's df min(n_sys, n_base) − 1 (it held its level in simulation where "
        "the permutation tests and Satterthwaite's df did not), *perm.* the exact permutation "
        "test where a system has a single run, *perm. MC* the same over "
        f"{seed_stats.MC_RELABELINGS:,} random relabelings, *1-run bootstrap* sacreBLEU's "
        "paired bootstrap over sentences where each system has one run: it ignores run-to-run "
        f"variance, and its verdict says so. Holm p: {holm}"
        + (
            "A row with *source ≥ N words* is judged on the test sentences whose tokenized source "
            "has at least N words (their number given), every run scored on those alone. "
            if subsets
            else ""
        )
        + "MDE: "
        f"the Δ detected with 80 % power at α {alpha}/m (two-sided; m the rows of the family, "
        "Holm's first step, since the verdicts are read after the correction), "
        "(t_{1−α/2m} + t₀.₈)·√(sd_sys²/n_sys + sd_base²/n_base), t at the test's df. Verdict: "
        f"*reproduced (same sign, significant after Holm)* at Holm p < {alpha} with the paper's "
        "sign, *opposite sign (significant after Holm)* with the other; otherwise *cannot be "
        "detected with n + n runs (needs N per system)* where the test's smallest p times m is "
        f"at least {alpha} (N: the runs giving 80 % power for the paper's Δ at the row's sd), "
        "*paper's Δ excluded (not significant)* where the CI excludes it, else *not detected "
        "(MDE x.xx)*. A paper Δ of 0 claims no direction: *difference found* or *no difference "
        "detected*.",
    ]
    return "\n".join(lines) + "\n" + _unjudged(unjudged)


def _unjudged(claims: Sequence[Mapping[str, Any]]) -> str:
    if not claims:
        return ""
    lines = ["", "**Not judged in this run** (claims of the config whose systems it lacks):", ""]
    for c in claims:
        what = f" ({_cell(c['what'])})" if c.get("what") else ""
        lines.append(
            f"- {_cell(c['paper'])}: {c['system']} vs {c['baseline']}{what} on {c['pair']} / "
            f"{c['testset']}, paper Δ {c['paper_delta']:+.2f}: {c['reason']}"
        )
    return "\n".join(lines) + "\n"


def write_findings(
    rows: Sequence[Mapping[str, Any]],
    md_path: Path,
    json_path: Path,
    title: str,
    cost: Mapping[str, Any] | None = None,
    unjudged: Sequence[Mapping[str, Any]] = (),
) -> None:
    """The table (and, given the experiment's cost, a line on its
    CPU-hours) as Markdown and JSON (with every run's score)."""
    from wordorder.evaluate.cost import cost_markdown

    text = findings_markdown(rows, title, unjudged)
    with atomic_open(md_path) as f:
        f.write(text + ("\n" + cost_markdown(cost) if cost else ""))
    with atomic_open(json_path) as f:
        json.dump({"findings": list(rows), "unjudged": list(unjudged), "cost": cost}, f, indent=1)
