"""The JSON files of scores (``scores/<pair>/<variant>/seed<k>/<testset>.json`` and the other
per-run score files): written atomically, UTF-8, keys in the order given, with a ``meta``
object naming what was scored; no NaN or infinity. Computing the scores is
:mod:`wordorder.evaluate.scores`, which re-exports these functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.io import atomic_open


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    return value


def write_scores(path: Path, scores: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
    """Write ``scores`` plus ``{"meta": meta}`` (pair, variant, seed, testset, ...) as JSON.

    The file is written atomically, UTF-8, keys in the order given.
    """
    if "meta" in scores:
        raise WordorderError("scores must not contain a 'meta' key; pass it as meta")
    doc = {**_jsonable(dict(scores)), "meta": _jsonable(dict(meta))}
    try:
        text = json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise WordorderError(f"scores cannot be written as JSON: {e}", path=path) from None
    with atomic_open(path) as f:
        f.write(text)
        f.write("\n")


def _not_a_number(constant: str) -> float:
    raise ValueError(constant)


def read_scores(path: Path) -> dict[str, Any]:
    """Read a file written by :func:`write_scores`."""
    path = Path(path)
    if not path.is_file():
        raise WordorderError("scores file not found", path=path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"), parse_constant=_not_a_number)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise WordorderError(f"not a valid scores JSON file ({e})", path=path) from None
    except ValueError as e:  # NaN or Infinity: no metric gives one, the file is broken
        raise WordorderError(
            f"a score is {e}, not a number", path=path, hint="rerun the step that wrote it"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("meta", {}), dict):
        raise WordorderError(
            "a scores file must hold a JSON object with a 'meta' object", path=path
        )
    return doc
