"""Significance of a system's BLEU against a baseline on the same test set.

* **Paired bootstrap** (Koehn 2004) as sacreBLEU implements it (``PairedTest``, ``bs``):
  B resamples of the test set with the same indices for both systems, corpus BLEU from the
  summed sufficient statistics of each draw, ``p = (#{d_b − mean(d) > |Δ|} + 1) / (B + 1)``
  with ``d_b`` the absolute difference in draw b. Seed 12345 unless ``SACREBLEU_SEED`` says
  otherwise, as in sacreBLEU. Identical outputs get p = 1 (sacreBLEU would say 1/(B + 1)).
* **Sign test** (Collins, Koehn & Kučerová 2005), which sacreBLEU lacks: sentence i counts
  "+" when putting the system's translation of sentence i into the baseline's output raises
  corpus BLEU, "−" when it lowers it; ties are dropped; the exact two-sided binomial p of
  n⁺ out of N = n⁺ + n⁻ at ½.

Both treat one training run as the system: for one run each (the findings' fallback) or a
single pair of outputs (``wordorder significance``). The tables' markers, "+" (p < 0.05) or "++"
(p < 0.01) for a better system as the papers print them and "−" / "−−" for a worse one
(:func:`marker`), come from the run-level test instead
(:func:`wordorder.evaluate.tables.run_level_markers`, docs/algorithms.md §SIG-SEEDS).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wordorder.errors import WordorderError


def sign_test_p(n_plus: int, n_minus: int) -> float:
    """Exact two-sided sign-test p: ``min(1, 2 · Σ_{k ≤ min(n⁺, n⁻)} C(N, k) / 2^N)``."""
    n = n_plus + n_minus
    if n == 0:
        return 1.0
    # Exact integers: 2.0**n overflows a float from N = 1,024 (every WMT/NIST test set has more
    # sentences); Python's int / int division rounds a ratio of big integers correctly.
    tail, term = 0, 1
    for k in range(min(n_plus, n_minus) + 1):
        tail += term  # term = C(n, k)
        term = term * (n - k) // (k + 1)
    return min(1.0, 2 * tail / (1 << n))


def marker(p: float | None, delta: float = 1.0) -> str:
    """ "++" / "+" for a system better than the baseline (``delta`` > 0) at p < 0.01 / 0.05,
    "−−" / "−" for a worse one, "" otherwise (or without a test)."""
    if p is None or delta == 0:
        return ""
    sign = "+" if delta > 0 else "−"
    return 2 * sign if p < 0.01 else sign if p < 0.05 else ""


def _check(system: Sequence[str], baseline: Sequence[str], refs: Sequence[str]) -> None:
    if not len(system) == len(baseline) == len(refs):
        raise WordorderError(
            (
                f"system ({len(system)}), baseline ({len(baseline)}) and reference "
                f"({len(refs)}) line counts differ"
            ),
            hint="compare outputs of the same test set",
        )
    if not refs:
        raise WordorderError("nothing to compare: the test set is empty")


def _all_refs(refs: Sequence[str], extra_refs: Sequence[Sequence[str]]) -> list[list[str]]:
    out = [list(refs), *(list(r) for r in extra_refs)]
    if any(len(r) != len(refs) for r in out):
        raise WordorderError(
            f"references of different lengths: {[len(r) for r in out]}",
            hint="every reference of a test set needs one line per source line",
        )
    return out


def bleu_sign_test(
    system: Sequence[str],
    baseline: Sequence[str],
    refs: Sequence[str],
    tokenize: str = "13a",
    extra_refs: Sequence[Sequence[str]] = (),
    lowercase: bool = False,
    brevity: str = "closest",
) -> dict:
    """Collins et al.'s sign test on corpus BLEU. Returns ``{"n_plus", "n_minus", "ties", "p"}``.
    ``extra_refs``: further references (BLEU over all); ``lowercase``: case-insensitive BLEU;
    ``brevity``: the reference length of the brevity penalty (:mod:`wordorder.evaluate.bleu`)."""
    from wordorder.evaluate.bleu import bleu_metric

    _check(system, baseline, refs)
    all_refs = _all_refs(refs, extra_refs)
    metric = bleu_metric(tokenize, lowercase, brevity)
    # Sufficient statistics per sentence: (N, 2 + 2·4) = hyp len, ref len, matches, totals.
    sys_stats = np.asarray(metric._extract_corpus_statistics(system, all_refs), dtype=np.int64)
    base_stats = np.asarray(metric._extract_corpus_statistics(baseline, all_refs), dtype=np.int64)
    total = base_stats.sum(0)
    b0 = metric._compute_score_from_stats(total.tolist()).score
    swapped = total[None, :] - base_stats + sys_stats  # one sentence replaced at a time
    scores = np.array([metric._compute_score_from_stats(row.tolist()).score for row in swapped])
    n_plus, n_minus = int((scores > b0).sum()), int((scores < b0).sum())
    system_bleu = metric._compute_score_from_stats(sys_stats.sum(0).tolist()).score
    return {
        "n_plus": n_plus,
        "n_minus": n_minus,
        "ties": len(refs) - n_plus - n_minus,
        "p": sign_test_p(n_plus, n_minus),
        "delta": system_bleu - b0,
    }


def bleu_paired_bootstrap(
    system: Sequence[str],
    baseline: Sequence[str],
    refs: Sequence[str],
    tokenize: str = "13a",
    samples: int = 1000,
    extra_refs: Sequence[Sequence[str]] = (),
    lowercase: bool = False,
    brevity: str = "closest",
) -> dict:
    """sacreBLEU's paired bootstrap. Returns ``{"p", "mean", "ci", "samples", "seed"}``:
    the system's mean BLEU over the draws and the half-width of its 95 % interval."""
    import os

    from sacrebleu.significance import PairedTest, Result

    from wordorder.evaluate.bleu import bleu_metric

    _check(system, baseline, refs)
    all_refs = _all_refs(refs, extra_refs)
    if list(system) == list(baseline):
        # sacreBLEU's count of d_b − mean(d) > |Δ| is 0 when every d_b is 0, which would give
        # identical outputs p = 1/(B + 1); no test can tell a system from itself: p = 1.
        return {"p": 1.0, "mean": None, "ci": None, "samples": samples, "seed": None}
    test = PairedTest(
        [("baseline", list(baseline)), ("system", list(system))],
        {"BLEU": bleu_metric(tokenize, lowercase, brevity)},
        all_refs,
        test_type="bs",
        n_samples=samples,
    )
    _, results = test()
    result = results["BLEU"][1]  # [baseline's Result, system's Result]
    # the paired bootstrap fills p, mean and CI of every system it compares
    assert isinstance(result, Result)
    assert result.p_value is not None and result.mean is not None and result.ci is not None
    return {
        "p": float(result.p_value),
        "mean": float(result.mean),
        "ci": float(result.ci),
        "samples": samples,
        "seed": os.environ.get("SACREBLEU_SEED", "12345"),
    }
