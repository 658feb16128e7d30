"""The beam search kernel of the top-down BTG preorderer, with the training oracle
(docs/algorithms.md §BTG-SEARCH); decoding with it is :mod:`wordorder.preorder.btg_search`, the
training update :mod:`wordorder.preorder.btg_update`.

Beam states live in flat arrays (double-buffered: score, validity, the stack of open spans with
their ctx, the action history), so one sentence's search allocates a few small arrays and runs
without Python. The score of a split is memoised per sentence: the 61 split-only features once
per ``(b, e, p)``, the 17 parent-dependent ones once per ``(b, e, p, ctx)``; both labels come from
one row fetch of the ``[2**hash_bits, 2]`` float32 table.

Decisions the paper and the reference code leave open (docs/algorithms.md §BTG-SEARCH):
- Tie-breaking: candidates are generated beam state by beam state (best first), pivots left to
  right, STR before INV; a candidate enters the beam only with a score above the K-th best
  (one equal to it is dropped, as in the reference code), and among equal scores the earlier
  one ranks first. The oracle is the first valid candidate with the highest score.
- Early update compares the oracle prefix with the best state of the pruned beam (the paper's
  early update; the C++ code takes the agenda's top, which is its worst state).
- Sentences longer than :data:`MEMO_MAX_N` words are scored without the memo (the memo is
  cubic in the length); the result is the same.

Numba's on-disk cache does not notice edits to callees in other modules: after changing
:mod:`wordorder.preorder.btg_features` (or this module, whose kernels btg_search and btg_update
call), delete the ``btg_*.nbi/.nbc`` files in ``__pycache__``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from wordorder.preorder.btg_features import N_DEP, N_INDEP, dep_rows, indep_rows

MEMO_MAX_N = 160


@njit(cache=True)
def _span_offsets(n):  # pragma: no cover - numba
    """Offset of span [b, e) (index b*(n+1)+e) in a flat list of its e-b-1
    pivots; total C(n+1, 3)."""
    off = np.full((n + 1) * (n + 1), -1, np.int64)
    k = 0
    for b in range(n):
        for e in range(b + 2, n + 1):
            off[b * (n + 1) + e] = k
            k += e - b - 1
    return off, k


@njit(cache=True)
def _range_minmax(ranks, n):  # pragma: no cover - numba
    """[n+1, n+1] min and max rank of the aligned words in [b, e); -1 when none is aligned."""
    mn = np.full((n + 1, n + 1), -1, np.int64)
    mx = np.full((n + 1, n + 1), -1, np.int64)
    for b in range(n):
        lo, hi = -1, -1
        for e in range(b + 1, n + 1):
            c = ranks[e - 1]
            if c >= 0:
                lo = c if lo < 0 or c < lo else lo
                hi = c if c > hi else hi
            mn[b, e], mx[b, e] = lo, hi
    return mn, mx


@njit(cache=True)
def _split_score(
    hs, n, b, e, p, ctx, W, shift, memo, off, mi, oki, md, okd, rows
):  # pragma: no cover
    """(STR, INV) scores of splitting [b, e) at p under ctx."""
    t = off[b * (n + 1) + e] + p - b - 1 if memo else 0
    if not memo or not oki[t]:
        indep_rows(hs, n, b, e, p, shift, rows)
        s0, s1 = 0.0, 0.0
        for k in range(N_INDEP):
            r = rows[k]
            s0 += W[r, 0]
            s1 += W[r, 1]
        mi[t, 0], mi[t, 1] = s0, s1
        oki[t] = memo
    if not memo or not okd[t, ctx]:
        dep_rows(hs, b, e, p, ctx, shift, rows)
        s0, s1 = 0.0, 0.0
        for k in range(N_DEP):
            r = rows[k]
            s0 += W[r, 0]
            s1 += W[r, 1]
        md[t, ctx, 0], md[t, ctx, 1] = s0, s1
        okd[t, ctx] = memo
    return mi[t, 0] + md[t, ctx, 0], mi[t, 1] + md[t, ctx, 1]


@njit(cache=True)
def beam_search(
    hs, n, ranks, train, W, shift, K, memo, sys_out, ref_out
):  # pragma: no cover - numba
    """Beam search over top-down BTG derivations of one sentence (n >= 2).

    Args:
        hs: [n, 3] uint64 attribute hashes.
        ranks: [n] constraint ranks (-1 unaligned); read only when ``train``.
        W: [2**bits, 2] float32 weights; shift = 64 - bits.
        memo: cache split scores (callers pass ``n <= MEMO_MAX_N``; the result is the same).
        sys_out, ref_out: [n-1, 2] int64 (pivot, label) outputs: the best derivation and, when
            training, the oracle (best valid) derivation.

    Returns:
        (T, early): the number of actions written to both outputs (n-1 unless an early update
        stopped the search, then ``early`` is True).
    """
    A = n - 1
    if memo:
        off, T3 = _span_offsets(n)
    else:
        off, T3 = np.zeros(1, np.int64), 1
    mi = np.empty((T3, 2))
    oki = np.zeros(T3, np.bool_)
    md = np.empty((T3, 5, 2))
    okd = np.zeros((T3, 5), np.bool_)
    rows = np.empty(N_INDEP, np.int64)
    if train:
        mn, mx = _range_minmax(ranks, n)
    else:
        mn = mx = np.zeros((1, 1), np.int64)
    D = n
    sb = np.empty((2, K, D), np.int64)
    se = np.empty((2, K, D), np.int64)
    sx = np.empty((2, K, D), np.int64)
    sz = np.empty((2, K), np.int64)
    ap = np.empty((2, K, A), np.int64)
    al = np.empty((2, K, A), np.int64)
    sc = np.empty((2, K))
    va = np.empty((2, K), np.bool_)
    c_sc = np.empty(K)
    c_par = np.empty(K, np.int64)
    c_p = np.empty(K, np.int64)
    c_l = np.empty(K, np.int64)
    c_va = np.empty(K, np.bool_)
    cur, nb = 0, 1
    sc[0, 0], va[0, 0], sz[0, 0] = 0.0, True, 1
    sb[0, 0, 0], se[0, 0, 0], sx[0, 0, 0] = 0, n, 0
    for t in range(A):
        nc = 0
        ob, ob_j, ob_p, ob_l = -np.inf, -1, 0, 0
        for j in range(nb):
            d = sz[cur, j] - 1
            b, e, ctx = sb[cur, j, d], se[cur, j, d], sx[cur, j, d]
            base, pv = sc[cur, j], va[cur, j]
            for p in range(b + 1, e):
                s0, s1 = _split_score(
                    hs, n, b, e, p, ctx, W, shift, memo, off, mi, oki, md, okd, rows
                )
                for lab in range(2):
                    s = base + (s0 if lab == 0 else s1)
                    ok = False
                    if train and pv:
                        if lab == 0:
                            hi, lo = mx[b, p], mn[p, e]
                        else:
                            hi, lo = mx[p, e], mn[b, p]
                        ok = hi < 0 or lo < 0 or hi <= lo
                        if ok and s > ob:
                            ob, ob_j, ob_p, ob_l = s, j, p, lab
                    if nc < K:
                        pos = nc
                        nc += 1
                    elif s > c_sc[K - 1]:
                        pos = K - 1
                    else:
                        continue
                    while pos > 0 and c_sc[pos - 1] < s:
                        c_sc[pos], c_par[pos], c_p[pos] = (
                            c_sc[pos - 1],
                            c_par[pos - 1],
                            c_p[pos - 1],
                        )
                        c_l[pos], c_va[pos] = c_l[pos - 1], c_va[pos - 1]
                        pos -= 1
                    c_sc[pos], c_par[pos], c_p[pos], c_l[pos], c_va[pos] = s, j, p, lab, ok
        if train:
            if ob_j < 0:  # no valid expansion: only if the constraint is not BTG-parsable
                return 0, True
            for k in range(t):
                ref_out[k, 0], ref_out[k, 1] = ap[cur, ob_j, k], al[cur, ob_j, k]
            ref_out[t, 0], ref_out[t, 1] = ob_p, ob_l
        nxt = 1 - cur
        any_valid = False
        for i in range(nc):
            j, p, lab = c_par[i], c_p[i], c_l[i]
            d = sz[cur, j] - 1
            b, e = sb[cur, j, d], se[cur, j, d]
            for k in range(d):
                sb[nxt, i, k], se[nxt, i, k], sx[nxt, i, k] = (
                    sb[cur, j, k],
                    se[cur, j, k],
                    sx[cur, j, k],
                )
            for k in range(t):
                ap[nxt, i, k], al[nxt, i, k] = ap[cur, j, k], al[cur, j, k]
            ap[nxt, i, t], al[nxt, i, t] = p, lab
            if p - b >= 2:
                sb[nxt, i, d], se[nxt, i, d], sx[nxt, i, d] = b, p, 1 + 2 * lab
                d += 1
            if e - p >= 2:
                sb[nxt, i, d], se[nxt, i, d], sx[nxt, i, d] = p, e, 2 + 2 * lab
                d += 1
            sz[nxt, i], sc[nxt, i], va[nxt, i] = d, c_sc[i], c_va[i]
            any_valid = any_valid or c_va[i]
        cur, nb = nxt, nc
        if train and not any_valid:  # early update: no valid state survived pruning
            for k in range(t + 1):
                sys_out[k, 0], sys_out[k, 1] = ap[cur, 0, k], al[cur, 0, k]
            return t + 1, True
    for k in range(A):
        sys_out[k, 0], sys_out[k, 1] = ap[cur, 0, k], al[cur, 0, k]
    return A, False


@njit(cache=True)
def replay(n, acts, T, out):  # pragma: no cover - numba
    """Spans of the first T (pivot, label) actions: out[t] = (b, e, ctx) of
    the span action t splits."""
    sb = np.empty(n, np.int64)
    se = np.empty(n, np.int64)
    sx = np.empty(n, np.int64)
    sb[0], se[0], sx[0] = 0, n, 0
    top = 1
    for t in range(T):
        top -= 1
        b, e = sb[top], se[top]
        out[t, 0], out[t, 1], out[t, 2] = b, e, sx[top]
        p, lab = acts[t, 0], acts[t, 1]
        if p - b >= 2:
            sb[top], se[top], sx[top] = b, p, 1 + 2 * lab
            top += 1
        if e - p >= 2:
            sb[top], se[top], sx[top] = p, e, 2 + 2 * lab
            top += 1
