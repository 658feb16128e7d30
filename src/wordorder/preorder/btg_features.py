"""Hashed features of the top-down BTG preorderer (docs/algorithms.md §BTG-FEATURES): 78 templates.

A split of span ``[b, e)`` at pivot ``p`` is described by 6 global templates and 24 templates for
each token attribute (word, POS, word class). Each feature is a tuple ``(template id, values...)``
whose values are small integers (sizes, labels) or token attributes; it is hashed to a row of a
``[2**hash_bits, 2]`` weight table (column = the action's label, so one row fetch gives both
labels' weights). Token attributes are hashed once per corpus to stable 64-bit integers
(blake2b), so the model needs no vocabulary; a position outside the sentence has the fixed value
:data:`EMPTY`. Feature keys are a chain of 64-bit mixes starting from a per-template seed, so
the template id is part of every key.

17 templates read the parent's label NT (0 STR, 1 INV, 2 root) and the span's SIDE (0 left
child, 1 right child, 2 root): the *dependent* ones. They are listed by :data:`DEPENDENT`; the
other 61 only depend on ``(b, e, p)``, which lets the search cache their sum per split.
The five (NT, SIDE) combinations are coded as ``ctx``: 0 root, else ``1 + 2 * NT + SIDE``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from numba import njit

N_FEATURES = 78
N_PER_ATTR = 24
ATTRIBUTES = ("word", "pos", "class")
_MASK = (1 << 64) - 1
_C1, _C2 = 0x9E3779B97F4A7C15, 0xD6E8FEB86659FD93

#: Value of an attribute at a position outside the sentence.
EMPTY = 0x243F6A8885A308D3

# Per-attribute templates as (name, positions); "NS" marks the NT&SIDE prefix.
_ATTR_TEMPLATES = (
    ("Ll-", ("Ll-",)),
    ("Ll", ("Ll",)),
    ("Lr", ("Lr",)),
    ("Rl", ("Rl",)),
    ("Rr", ("Rr",)),
    ("Rr+", ("Rr+",)),
    ("Ll-&Ll", ("Ll-", "Ll")),
    ("Ll&Lr", ("Ll", "Lr")),
    ("Ll&Rl", ("Ll", "Rl")),
    ("Ll&Rr", ("Ll", "Rr")),
    ("Lr&Rl", ("Lr", "Rl")),
    ("Lr&Rr", ("Lr", "Rr")),
    ("Rl&Rr", ("Rl", "Rr")),
    ("Rr&Rr+", ("Rr", "Rr+")),
    ("Lr-&Lr&Rl", ("Lr-", "Lr", "Rl")),
    ("Ll&Lr&Rl", ("Ll", "Lr", "Rl")),
    ("Lr&Rl&Rr", ("Lr", "Rl", "Rr")),
    ("Lr&Rl&Rl+", ("Lr", "Rl", "Rl+")),
    ("Ll&Lr&Rl&Rr", ("Ll", "Lr", "Rl", "Rr")),
    ("NT&SIDE&Ll", ("NS", "Ll")),
    ("NT&SIDE&Lr", ("NS", "Lr")),
    ("NT&SIDE&Rl", ("NS", "Rl")),
    ("NT&SIDE&Rr", ("NS", "Rr")),
    ("NT&SIDE&Ll&Rr", ("NS", "Ll", "Rr")),
)
_GLOBAL_NAMES = ("bias", "balance", "span_length", "child_sizes", "NT", "NT&SIDE")

#: The 78 template names, in template-id order.
TEMPLATE_NAMES = _GLOBAL_NAMES + tuple(
    f"{a}:{name}" for a in ATTRIBUTES for name, _ in _ATTR_TEMPLATES
)

#: Template ids that depend on the parent label and side (17 of 78).
DEPENDENT = np.array(
    [4, 5] + [6 + N_PER_ATTR * a + k for a in range(3) for k in range(19, 24)], np.int64
)
#: Template ids that depend on the split only (61 of 78).
INDEPENDENT = np.setdiff1d(np.arange(N_FEATURES), DEPENDENT)
N_INDEP, N_DEP = len(INDEPENDENT), len(DEPENDENT)


def _py_mix(h: int, v: int) -> int:
    x = ((int(h) ^ int(v)) * _C1) & _MASK
    x ^= x >> 32
    x = (x * _C2) & _MASK
    return x ^ (x >> 32)


def _seed(template: int) -> int:
    return _py_mix(0x5851F42D4C957F2D, template + 1)


_SEEDS = np.array([_seed(t) for t in range(N_FEATURES)], dtype=np.uint64)
# Key prefixes of the dependent templates for each ctx: mix(mix(seed, NT),
# SIDE) (NT alone for "NT").
_CTX_NT = ((2, 2), (0, 0), (0, 1), (1, 0), (1, 1))
_DEP_PREFIX = np.array(
    [
        [
            _py_mix(_seed(t), nt) if t == 4 else _py_mix(_py_mix(_seed(t), nt), side)
            for nt, side in _CTX_NT
        ]
        for t in DEPENDENT
    ],
    dtype=np.uint64,
)


def ctx_code(nt: int, side: int) -> int:
    """The ctx code of a parent label NT and a SIDE (both 2 at the root)."""
    if (nt == 2) != (side == 2) or not (0 <= nt <= 2 and 0 <= side <= 2):
        raise ValueError(f"invalid (NT, SIDE) = ({nt}, {side})")
    return 0 if nt == 2 else 1 + 2 * nt + side


def token_hash(s: str) -> int:
    """Stable 64-bit hash of a token attribute string."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


def hash_tokens(
    sentences: Sequence[tuple[Sequence[str], Sequence[str], Sequence[str]]],
) -> tuple[np.ndarray, np.ndarray]:
    """Attribute hashes of a corpus: ``(hashes [total_tokens, 3] uint64, offsets [S + 1] int64)``.

    Sentence s has tokens ``hashes[offsets[s]:offsets[s + 1]]``; columns are word, POS, class.
    """
    cache: dict[str, int] = {}
    flat: list[int] = []
    offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    for s, (words, pos, classes) in enumerate(sentences):
        for w, p, c in zip(words, pos, classes):
            for v in (w, p, c):
                h = cache.get(v)
                if h is None:
                    h = cache[v] = token_hash(v)
                flat.append(h)
        offsets[s + 1] = offsets[s] + len(words)
    return np.array(flat, dtype=np.uint64).reshape(-1, 3), offsets


def feature_templates(
    sentence: tuple[Sequence[str], Sequence[str], Sequence[str]],
    b: int,
    e: int,
    p: int,
    nt: int,
    side: int,
) -> list[tuple]:
    """The 78 raw (unhashed) features of splitting ``[b, e)`` at ``p``, in template-id order.

    Each is ``(template id, values...)``: ints for sizes and labels, attribute strings for
    tokens, None for a position outside the sentence. For tests and inspection.
    """
    n = len(sentence[0])
    if not (0 <= b < p < e <= n):
        raise ValueError(f"({b}, {e}, {p}) is not a split of a sentence of {n} words")
    ln, rn = p - b, e - p
    balance = 0 if ln > rn else 1 if rn > ln else 2
    out: list[tuple] = [
        (0,),
        (1, balance),
        (2, min(e - b, 99)),
        (3, min(ln, 5), min(rn, 5)),
        (4, nt),
        (5, nt, side),
    ]
    where = {
        "Ll-": b - 1,
        "Ll": b,
        "Lr": p - 1,
        "Rl": p,
        "Rr": e - 1,
        "Rr+": e,
        "Lr-": p - 2,
        "Rl+": p + 1,
    }
    for a in range(3):
        for k, (_, positions) in enumerate(_ATTR_TEMPLATES):
            vals: list = []
            for pos in positions:
                if pos == "NS":
                    vals += [nt, side]
                else:
                    i = where[pos]
                    vals.append(sentence[a][i] if 0 <= i < n else None)
            out.append((6 + N_PER_ATTR * a + k, *vals))
    return out


def template_key(feature: tuple) -> int:
    """The 64-bit key of a raw feature from :func:`feature_templates` (pure Python reference)."""
    h = _seed(feature[0])
    for v in feature[1:]:
        h = _py_mix(h, EMPTY if v is None else token_hash(v) if isinstance(v, str) else int(v))
    return h


@njit(inline="always")
def _mix(h, v):  # pragma: no cover - numba
    x = (h ^ v) * np.uint64(_C1)
    x ^= x >> np.uint64(32)
    x *= np.uint64(_C2)
    return x ^ (x >> np.uint64(32))


@njit(inline="always")
def _at(hs, n, i, a):  # pragma: no cover - numba
    return hs[i, a] if 0 <= i < n else np.uint64(EMPTY)


@njit(cache=True)
def indep_rows(hs, n, b, e, p, shift, rows):  # pragma: no cover - numba
    """Rows of the 61 split-only features of ``(b, e, p)`` into ``rows[:61]`` (INDEPENDENT order).

    ``hs`` is the sentence's [n, 3] uint64 attribute hashes; row = key >> shift (= 64 - hash_bits).
    """
    S = _SEEDS
    ln, rn = p - b, e - p
    bal = 0 if ln > rn else 1 if rn > ln else 2
    sh = np.uint64(shift)
    rows[0] = S[0] >> sh
    rows[1] = _mix(S[1], np.uint64(bal)) >> sh
    rows[2] = _mix(S[2], np.uint64(min(e - b, 99))) >> sh
    rows[3] = _mix(_mix(S[3], np.uint64(min(ln, 5))), np.uint64(min(rn, 5))) >> sh
    k = 4
    for a in range(3):
        t = 6 + 24 * a
        llm, ll, lr, rl = _at(hs, n, b - 1, a), hs[b, a], hs[p - 1, a], hs[p, a]
        rr, rrp, lrm, rlp = (
            hs[e - 1, a],
            _at(hs, n, e, a),
            _at(hs, n, p - 2, a),
            _at(hs, n, p + 1, a),
        )
        rows[k + 0] = _mix(S[t + 0], llm) >> sh
        rows[k + 1] = _mix(S[t + 1], ll) >> sh
        rows[k + 2] = _mix(S[t + 2], lr) >> sh
        rows[k + 3] = _mix(S[t + 3], rl) >> sh
        rows[k + 4] = _mix(S[t + 4], rr) >> sh
        rows[k + 5] = _mix(S[t + 5], rrp) >> sh
        rows[k + 6] = _mix(_mix(S[t + 6], llm), ll) >> sh
        rows[k + 7] = _mix(_mix(S[t + 7], ll), lr) >> sh
        rows[k + 8] = _mix(_mix(S[t + 8], ll), rl) >> sh
        rows[k + 9] = _mix(_mix(S[t + 9], ll), rr) >> sh
        rows[k + 10] = _mix(_mix(S[t + 10], lr), rl) >> sh
        rows[k + 11] = _mix(_mix(S[t + 11], lr), rr) >> sh
        rows[k + 12] = _mix(_mix(S[t + 12], rl), rr) >> sh
        rows[k + 13] = _mix(_mix(S[t + 13], rr), rrp) >> sh
        rows[k + 14] = _mix(_mix(_mix(S[t + 14], lrm), lr), rl) >> sh
        rows[k + 15] = _mix(_mix(_mix(S[t + 15], ll), lr), rl) >> sh
        rows[k + 16] = _mix(_mix(_mix(S[t + 16], lr), rl), rr) >> sh
        rows[k + 17] = _mix(_mix(_mix(S[t + 17], lr), rl), rlp) >> sh
        rows[k + 18] = _mix(_mix(_mix(_mix(S[t + 18], ll), lr), rl), rr) >> sh
        k += 19


@njit(cache=True)
def dep_rows(hs, b, e, p, ctx, shift, rows):  # pragma: no cover - numba
    """Rows of the 17 NT/SIDE features of ``(b, e, p)`` under ``ctx`` into
    ``rows[:17]`` (DEPENDENT order)."""
    P = _DEP_PREFIX
    sh = np.uint64(shift)
    rows[0] = P[0, ctx] >> sh
    rows[1] = P[1, ctx] >> sh
    k = 2
    for a in range(3):
        ll, lr, rl, rr = hs[b, a], hs[p - 1, a], hs[p, a], hs[e - 1, a]
        rows[k + 0] = _mix(P[k + 0, ctx], ll) >> sh
        rows[k + 1] = _mix(P[k + 1, ctx], lr) >> sh
        rows[k + 2] = _mix(P[k + 2, ctx], rl) >> sh
        rows[k + 3] = _mix(P[k + 3, ctx], rr) >> sh
        rows[k + 4] = _mix(_mix(P[k + 4, ctx], ll), rr) >> sh
        k += 5


def feature_rows(
    hashes: np.ndarray, b: int, e: int, p: int, nt: int, side: int, hash_bits: int
) -> np.ndarray:
    """Weight-table rows of the 78 features of one split, in template-id order.

    Args:
        hashes: [n, 3] uint64 attribute hashes of the sentence (see :func:`hash_tokens`).
        b, e, p: the span ``[b, e)`` and its pivot.
        nt, side: the parent's label and the span's side (2, 2 at the root).
        hash_bits: log2 of the table size.

    Returns:
        [78] int64 rows; equal to ``template_key(f) >> (64 - hash_bits)`` for the features
        ``f`` of :func:`feature_templates`.
    """
    hs = np.ascontiguousarray(hashes, dtype=np.uint64)
    n = len(hs)
    if not (0 <= b < p < e <= n):
        raise ValueError(f"({b}, {e}, {p}) is not a split of a sentence of {n} words")
    ind = np.empty(N_INDEP, np.int64)
    dep = np.empty(N_DEP, np.int64)
    indep_rows(hs, n, b, e, p, 64 - hash_bits, ind)
    dep_rows(hs, b, e, p, ctx_code(nt, side), 64 - hash_bits, dep)
    out = np.empty(N_FEATURES, np.int64)
    out[INDEPENDENT] = ind
    out[DEPENDENT] = dep
    return out
