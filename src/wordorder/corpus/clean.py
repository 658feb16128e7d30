"""Length and length-ratio filtering of a tokenized parallel corpus.

Lengths are counted in whitespace tokens of the *tokenized* text, as the 50- and 80-token
limits of the papers are. A pair is dropped for the first of these reasons that applies
(and counted under it): ``empty`` (a side has no tokens), ``too_long`` (a side has more than
``max_len`` tokens), ``too_short`` (a side has fewer than ``min_len``), ``ratio`` (the longer
side is more than ``max_ratio`` times the shorter one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from wordorder.errors import WordorderError

REASONS = ("empty", "too_long", "too_short", "ratio")


@dataclass(frozen=True)
class CleanOptions:
    """Cleaning limits: token counts per side and the largest allowed length ratio."""

    min_len: int = 1
    max_len: int = 80
    max_ratio: float = 9.0

    def __post_init__(self) -> None:
        for name in ("min_len", "max_len"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise WordorderError(f"clean.{name} must be a positive integer, not {value!r}")
        if self.max_len < self.min_len:
            raise WordorderError(
                f"clean.max_len ({self.max_len}) is smaller than clean.min_len ({self.min_len})"
            )
        if (
            isinstance(self.max_ratio, bool)
            or not isinstance(self.max_ratio, (int, float))
            or not self.max_ratio >= 1
        ):
            raise WordorderError(f"clean.max_ratio must be a number >= 1, not {self.max_ratio!r}")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> CleanOptions:
        """Options from a config block; unspecified ones keep their defaults."""
        d = dict(d or {})
        known = {f.name for f in fields(cls)}
        for key in d:
            if key not in known:
                raise WordorderError(
                    f"unknown cleaning option '{key}'", hint=f"options: {', '.join(sorted(known))}"
                )
        return cls(**d)


def _reason(n_src: int, n_tgt: int, opts: CleanOptions) -> str | None:
    if n_src == 0 or n_tgt == 0:
        return "empty"
    if max(n_src, n_tgt) > opts.max_len:
        return "too_long"
    if min(n_src, n_tgt) < opts.min_len:
        return "too_short"
    if max(n_src, n_tgt) / max(1, min(n_src, n_tgt)) > opts.max_ratio:
        return "ratio"
    return None


def clean_parallel(
    src_tok: Sequence[str], tgt_tok: Sequence[str], opts: CleanOptions
) -> tuple[list[int], dict]:
    """Return the indices of the pairs to keep (ascending) and how many were dropped and why.

    The stats are ``{"input", "kept", "empty", "too_long", "too_short", "ratio"}``.
    """
    if len(src_tok) != len(tgt_tok):
        raise WordorderError(
            f"cannot clean a corpus whose sides differ in length: "
            f"{len(src_tok)} source lines, {len(tgt_tok)} target lines"
        )
    stats = {"input": len(src_tok), "kept": 0, **{r: 0 for r in REASONS}}
    kept: list[int] = []
    for i, (s, t) in enumerate(zip(src_tok, tgt_tok)):
        reason = _reason(len(s.split()), len(t.split()), opts)
        if reason is None:
            kept.append(i)
        else:
            stats[reason] += 1
    stats["kept"] = len(kept)
    return kept, stats
