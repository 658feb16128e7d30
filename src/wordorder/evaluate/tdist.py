"""Student's t distribution without scipy (docs/algorithms.md §SIG-SEEDS): its two-sided tail,
its quantile and the power of a two-sided t-test (the noncentral t).

scipy is not a dependency, and the seed-level statistics need three things from the t
distribution: the p of Welch's t, the quantiles of the t-based interval and minimal detectable
effect, and the power at a number of runs. Every function takes arrays (evaluated elementwise,
any shape, broadcast) as well as floats, so the simulation tests can run thousands of
experiments in one call; a float in gives a float out.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import overload

import numpy as np

_TINY = 1e-300
_EPS = 1e-15
_MAX_TERMS = 500


def _betacf(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The continued fraction of the incomplete beta function (modified Lentz), elementwise;
    iterates until every element has converged (or _MAX_TERMS)."""
    c = np.ones_like(x)
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / np.where(np.abs(d) > _TINY, d, _TINY)
    h = d.copy()
    for m in range(1, _MAX_TERMS):
        delta = np.ones_like(x)
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / np.where(np.abs(d) > _TINY, d, _TINY)
            c = 1.0 + num / c
            c = np.where(np.abs(c) > _TINY, c, _TINY)
            delta = d * c
            h = h * delta
        if np.all(np.abs(delta - 1.0) < _EPS):
            break
    return h


def _lgamma(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.lgamma, otypes=[float])(x)


def _betacf_scalar(a: float, b: float, x: float) -> float:
    """:func:`_betacf` for one value, in plain floats (a numpy call per term would cost more)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + num / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return h


def _betainc_scalar(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    swap = x >= (a + 1.0) / (a + b + 2.0)
    p, q, z = (b, a, 1.0 - x) if swap else (a, b, x)
    front = math.exp(
        math.lgamma(p + q) - math.lgamma(p) - math.lgamma(q) + p * math.log(z) + q * math.log1p(-z)
    )
    part = front * _betacf_scalar(p, q, z) / p
    return 1.0 - part if swap else part


@overload
def betainc(a: float, b: float, x: float) -> float: ...
@overload
def betainc(a: np.ndarray | float, b: np.ndarray | float, x: np.ndarray) -> np.ndarray: ...
def betainc(
    a: np.ndarray | float, b: np.ndarray | float, x: np.ndarray | float
) -> np.ndarray | float:
    """The regularized incomplete beta function I_x(a, b), elementwise over broadcast arrays.
    The continued fraction converges fast for x < (a + 1)/(a + b + 2); beyond it
    I_x(a, b) = 1 − I_{1−x}(b, a)."""
    if all(np.ndim(v) == 0 for v in (a, b, x)):
        return _betainc_scalar(float(a), float(b), float(x))
    aa, bb, xx = (np.asarray(v, dtype=float) for v in np.broadcast_arrays(a, b, x))
    inside = (xx > 0.0) & (xx < 1.0)
    xi = np.where(inside, xx, 0.5)  # placeholders where the answer is 0 or 1
    swap = xi >= (aa + 1.0) / (aa + bb + 2.0)
    p, q, z = np.where(swap, bb, aa), np.where(swap, aa, bb), np.where(swap, 1.0 - xi, xi)
    front = np.exp(_lgamma(p + q) - _lgamma(p) - _lgamma(q) + p * np.log(z) + q * np.log1p(-z))
    part = front * _betacf(p, q, z) / p
    return np.where(inside, np.where(swap, 1.0 - part, part), np.where(xx >= 1.0, 1.0, 0.0))


@overload
def t_two_sided_p(t: float, df: float) -> float: ...  # type: ignore[overload-overlap]
@overload
def t_two_sided_p(t: np.ndarray | float, df: np.ndarray | float) -> np.ndarray: ...
def t_two_sided_p(t: np.ndarray | float, df: np.ndarray | float) -> np.ndarray | float:
    """P(|T| ≥ |t|) for Student's t with ``df`` (real, > 0) degrees of freedom:
    I_{df/(df+t²)}(df/2, ½); 0 for an infinite t."""
    scalar = np.ndim(t) == 0 and np.ndim(df) == 0
    tt, dd = (np.asarray(v, dtype=float) for v in np.broadcast_arrays(t, df))
    finite = np.isfinite(tt)
    t2 = np.where(finite, tt * tt, 0.0)
    p = np.where(finite, np.minimum(1.0, betainc(dd / 2.0, 0.5, dd / (dd + t2))), 0.0)
    return float(p) if scalar else p


def _t_log_density(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """log of Student's t density at t."""
    return (
        _lgamma((df + 1.0) / 2.0)
        - _lgamma(df / 2.0)
        - 0.5 * np.log(df * math.pi)
        - (df + 1.0) / 2.0 * np.log1p(t * t / df)
    )


_NORMAL_QUANTILE = np.vectorize(NormalDist().inv_cdf, otypes=[float])


@overload
def t_quantile(q: float, df: float) -> float: ...  # type: ignore[overload-overlap]
@overload
def t_quantile(q: np.ndarray | float, df: np.ndarray | float) -> np.ndarray: ...
def t_quantile(q: np.ndarray | float, df: np.ndarray | float) -> np.ndarray | float:
    """The q-quantile of Student's t with ``df`` (real, > 0) degrees of freedom, 0 < q < 1.

    Newton's method on log P(|T| ≥ t) against log t, from the normal quantile: the t tail is
    close to a power of t, so this converges in a few steps for any df, where Newton on t
    itself overshoots at 1–2 df. Steps until every element moves by less than 1e-13
    (relative), at most 60."""
    scalar = np.ndim(q) == 0 and np.ndim(df) == 0
    qq, dd = (np.asarray(v, dtype=float) for v in np.broadcast_arrays(q, df))
    if np.any((qq <= 0) | (qq >= 1)) or np.any(dd <= 0):
        raise ValueError("t_quantile needs 0 < q < 1 and df > 0")
    tail = 2.0 * np.minimum(qq, 1.0 - qq)  # the two-sided p of |t|
    log_tail = np.log(tail)
    centre = tail >= 1.0
    u = np.log(np.maximum(_NORMAL_QUANTILE(np.where(centre, 0.75, 1.0 - tail / 2.0)), 1e-3))
    for _ in range(60):
        t = np.exp(u)
        p2 = np.maximum(t_two_sided_p(t, dd), 1e-300)
        # d log p2 / d log t = −2·t·f(t)/p2
        slope = -2.0 * t * np.exp(_t_log_density(t, dd)) / p2
        step = (np.log(p2) - log_tail) / slope
        step = np.clip(step, -2.0, 2.0)
        u = u - step
        if np.all(np.abs(step) < 1e-13):
            break
    out = np.where(centre, 0.0, np.where(qq < 0.5, -1.0, 1.0) * np.exp(u))
    return float(out) if scalar else out


_NORMAL_CDF = np.vectorize(lambda x: 0.5 * math.erfc(-x / math.sqrt(2.0)), otypes=[float])


def t_test_power(noncentrality: float, df: float, level: float) -> float:
    """The power of a two-sided t-test at ``level`` when T = (Z + λ)/√(V/df), V ~ χ²_df
    (the noncentral t): E_V[Φ(λ − c·√(V/df)) + Φ(−λ − c·√(V/df))], c = t_{1−level/2, df},
    integrated over the scaled chi u = √(V/df) (trapezoid on 4,001 points over its mass)."""
    if df <= 0 or not 0 < level < 1:
        raise ValueError("t_test_power needs df > 0 and 0 < level < 1")
    lam = abs(noncentrality)
    c = t_quantile(1.0 - level / 2.0, df)
    spread = 1.0 / math.sqrt(2.0 * df)  # the scaled chi's sd, roughly
    u = np.linspace(1e-9, 1.0 + 40.0 * spread + 3.0, 4001)
    # density of u = √(V/df): 2·df·u·f_χ²(df·u²)
    log_f = (
        math.log(2.0 * df)
        + np.log(u)
        + (df / 2.0 - 1.0) * np.log(df * u * u)
        - df * u * u / 2.0
        - (df / 2.0) * math.log(2.0)
        - math.lgamma(df / 2.0)
    )
    f = np.exp(log_f)
    g = _NORMAL_CDF(lam - c * u) + _NORMAL_CDF(-lam - c * u)
    y = f * g
    return float(min(1.0, np.sum((y[1:] + y[:-1]) * np.diff(u)) / 2.0))
