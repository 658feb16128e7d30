"""Numba kernels that train the top-down BTG preorderer online (docs/algorithms.md §BTG-UPDATE).

For each sentence the beam search (:mod:`wordorder.preorder.btg_beam`) returns the system
derivation and the oracle, the best derivation valid for the constraint (possibly cut short by
an early update); when they differ, the weights move towards the oracle's features and away
from the system's from their first differing action on.

Decisions the paper and the reference code leave open (docs/algorithms.md §BTG-UPDATE):
- Updates act on hashed rows: Δ and ‖Δ‖² are summed per (row, label), so colliding features
  add up exactly as they do in the score.
- An entry counts as updated (for ``min_updates``) when its net change is non-zero.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from wordorder.preorder.btg_beam import MEMO_MAX_N, beam_search, replay
from wordorder.preorder.btg_features import N_DEP, N_FEATURES, N_INDEP, dep_rows, indep_rows


@njit(cache=True)
def update(hs, n, sys, ref, T, W, avg, cnt, shift, pa, avg_coef):  # pragma: no cover - numba
    """Move W towards ``ref`` and away from ``sys`` from their first difference on
    (docs/algorithms.md §BTG-UPDATE).

    PA-I (``pa``): tau = min(1, (w·(Φ_sys − Φ_ref) + sqrt(T − t0)) / ‖Δ‖²); perceptron: tau = 1.
    W += tau Δ; avg += tau Δ avg_coef; cnt counts the updates of each (row, label).
    Returns tau (0 when nothing changed).
    """
    t0 = T
    for t in range(T):
        if sys[t, 0] != ref[t, 0] or sys[t, 1] != ref[t, 1]:
            t0 = t
            break
    if t0 == T:
        return 0.0
    m = T - t0
    keys = np.empty(2 * m * N_FEATURES, np.int64)
    vals = np.empty(2 * m * N_FEATURES, np.int64)
    rows = np.empty(N_INDEP, np.int64)
    spans = np.empty((T, 3), np.int64)
    q = 0
    for which in range(2):
        acts = ref if which == 0 else sys
        sign = 1 if which == 0 else -1
        replay(n, acts, T, spans)
        for t in range(t0, T):
            b, e, ctx = spans[t, 0], spans[t, 1], spans[t, 2]
            p, lab = acts[t, 0], acts[t, 1]
            indep_rows(hs, n, b, e, p, shift, rows)
            for k in range(N_INDEP):
                keys[q], vals[q] = 2 * rows[k] + lab, sign
                q += 1
            dep_rows(hs, b, e, p, ctx, shift, rows)
            for k in range(N_DEP):
                keys[q], vals[q] = 2 * rows[k] + lab, sign
                q += 1
    order = np.argsort(keys[:q])
    uk = np.empty(q, np.int64)
    uv = np.zeros(q, np.int64)
    u = 0
    for i in range(q):
        k = keys[order[i]]
        if u == 0 or uk[u - 1] != k:
            uk[u] = k
            u += 1
        uv[u - 1] += vals[order[i]]
    dot, sq = 0.0, 0.0
    for i in range(u):
        if uv[i] != 0:
            dot += uv[i] * W[uk[i] >> 1, uk[i] & 1]
            sq += uv[i] * uv[i]
    if sq == 0.0:
        return 0.0
    tau = min(1.0, (np.sqrt(m) - dot) / sq) if pa else 1.0
    if tau <= 0.0:
        return 0.0
    for i in range(u):
        if uv[i] != 0:
            r, c = uk[i] >> 1, uk[i] & 1
            W[r, c] += tau * uv[i]
            avg[r, c] += tau * uv[i] * avg_coef
            cnt[r, c] += 1
    return tau


@njit(cache=True)
def train_chunk(
    ids, hashes, offsets, ranks, W, avg, cnt, shift, K, pa, u0, N, stats
):  # pragma: no cover
    """One online pass over sentences ``ids`` (in that order); u0 sentences were processed before.

    stats[0] += errors (system derivation != oracle), stats[1] += early updates.
    """
    for i in range(len(ids)):
        s = ids[i]
        a = offsets[s]
        n = offsets[s + 1] - a
        hs = hashes[a : a + n]
        sys = np.empty((n - 1, 2), np.int64)
        ref = np.empty((n - 1, 2), np.int64)
        # train = n > 1 is True but not a literal: one compiled beam_search serves all callers
        T, early = beam_search(
            hs, n, ranks[a : a + n], n > 1, W, shift, K, n <= MEMO_MAX_N, sys, ref
        )
        differ = False
        for t in range(T):
            if sys[t, 0] != ref[t, 0] or sys[t, 1] != ref[t, 1]:
                differ = True
                break
        if differ:
            stats[0] += 1
            if early:
                stats[1] += 1
            update(hs, n, sys, ref, T, W, avg, cnt, shift, pa, (N - (u0 + i)) / N)
