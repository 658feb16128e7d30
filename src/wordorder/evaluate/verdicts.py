"""What a claim's row of the findings table says (docs/algorithms.md §SIG-SEEDS).

Reproduction is judged by sign and Holm-adjusted significance only. The papers' Δ come from
other data and model sizes, so "the paper's Δ lies inside our CI" is no criterion; the size is
reported beside the verdict as our Δ / the paper's Δ with its interval (:func:`ratio`).
"""

from __future__ import annotations

from wordorder.evaluate.seed_stats import ALPHA

__all__ = ["ratio", "verdict"]


def ratio(
    delta: float, ci: tuple[float, float], paper_delta: float
) -> tuple[float, tuple[float, float]] | None:
    """Our Δ / the paper's Δ and its interval (our CI divided by the paper's Δ, taken as a
    fixed number); None for a paper Δ of 0, which claims no size."""
    if paper_delta == 0:
        return None
    lo, hi = sorted((ci[0] / paper_delta, ci[1] / paper_delta))
    return delta / paper_delta, (lo, hi)


def verdict(
    paper_delta: float,
    delta: float,
    p_holm: float,
    ci: tuple[float, float],
    mde_: float | None,
    seed_level: bool = True,
    floor: float = 0.0,
    alpha: float = ALPHA,
    claims: int = 1,
    runs: tuple[int, int] | None = None,
    needed: int | None = None,
) -> str:
    """The verdict of a claim's row.

    Significant after Holm (adjusted p < α): *reproduced (same sign, significant after Holm)*,
    *opposite sign (significant after Holm)*, or for a paper Δ of 0 (no direction claimed)
    *difference found (significant after Holm)*. Otherwise, in this order:

    * *cannot be detected with n_A + n_B runs (needs N per system)*: the smallest p the row's
      test can give (``floor``, :func:`wordorder.evaluate.seed_stats.test_floor`) times the
      family's ``claims`` m is at least α, so the row cannot pass Holm's first step whatever
      the effect; ``needed``: the runs per system that give 80 % power at α/m for the paper's
      Δ at the row's sd (:func:`wordorder.evaluate.power.runs_for_power`);
    * *paper's Δ excluded (not significant)*: the paper's Δ lies outside our interval ``ci``
      although the difference is not significant;
    * *not detected (MDE x.xx)* / *no difference detected (MDE x.xx)*: absence of evidence at
      the design's power, the MDE at α/m.

    A test over one run of each system (``seed_level`` false) sees sentence sampling only: its
    verdict starts with "one run:" and never says "reproduced".
    """
    significant = p_holm < alpha and delta != 0
    power = f" (MDE {mde_:.2f})" if mde_ is not None else ""
    if not seed_level:
        if not significant:
            text = "not detected" if paper_delta else "no difference detected"
        elif paper_delta == 0:
            text = "difference found"
        else:
            text = "same sign" if (delta > 0) == (paper_delta > 0) else "opposite"
        return f"one run: {text} (sentence sampling only)"
    if significant:
        if paper_delta == 0:
            return "difference found (significant after Holm)"
        if (delta > 0) == (paper_delta > 0):
            return "reproduced (same sign, significant after Holm)"
        return "opposite sign (significant after Holm)"
    if floor * claims >= alpha:
        with_runs = f" with {runs[0]} + {runs[1]} runs" if runs else ""
        more = f" (needs {needed} per system)" if needed else ""
        return f"cannot be detected{with_runs}{more}"
    if paper_delta != 0 and not ci[0] <= paper_delta <= ci[1]:
        return "paper's Δ excluded (not significant)"
    return f"{'not' if paper_delta else 'no difference'} detected{power}"
