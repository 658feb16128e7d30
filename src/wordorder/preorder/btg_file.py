"""The top-down BTG preorderer's options and its model file (docs/algorithms.md §BTG).

A model is a [2**hash_bits, 2] float32 weight table (columns STR, INV) with its options. The file
is a compressed npz of the nonzero weights only: their flat indices as uint32 gaps (sorted, so
they compress well) and their values, with the options as JSON. Training and decoding are
:mod:`wordorder.preorder.btg` (which re-exports :class:`BTGOptions`).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from wordorder.errors import WordorderError
from wordorder.io import atomic_open

FORMAT = "wordorder-btg-1"


@dataclass
class BTGOptions:
    """Training and decoding options.

    beam: beam width K; iterations: training passes (stops early after one without errors);
    update: "pa" (PA-I, the reference code) or "perceptron" (the paper); hash_bits: log2 of the
    weight-table rows; min_updates: drop averaged weights updated fewer times; order:
    "shuffled" (each iteration in a random order drawn from ``seed``) or "file" (corpus order, as
    the reference code).
    """

    beam: int = 20
    iterations: int = 20
    update: str = "pa"
    hash_bits: int = 22
    min_updates: int = 0
    seed: int = 1
    order: str = "shuffled"

    def check(self) -> BTGOptions:
        """Raise WordorderError for an invalid value; return self."""
        problems = []
        if not (isinstance(self.beam, int) and self.beam >= 1):
            problems.append(f"beam must be an integer >= 1, got {self.beam!r}")
        if not (isinstance(self.iterations, int) and self.iterations >= 1):
            problems.append(f"iterations must be an integer >= 1, got {self.iterations!r}")
        if self.update not in ("pa", "perceptron"):
            problems.append(f"update must be 'pa' or 'perceptron', got {self.update!r}")
        if not (isinstance(self.hash_bits, int) and 8 <= self.hash_bits <= 30):
            problems.append(f"hash_bits must be an integer in [8, 30], got {self.hash_bits!r}")
        if self.order not in ("shuffled", "file"):
            problems.append(f"order must be 'shuffled' or 'file', got {self.order!r}")
        if not (isinstance(self.min_updates, int) and self.min_updates >= 0):
            problems.append(f"min_updates must be an integer >= 0, got {self.min_updates!r}")
        if problems:
            raise WordorderError(
                "invalid BTG options: " + "; ".join(problems),
                hint="fix the preorder.btg block of the config",
            )
        return self


def write_model(
    path: str | Path, weights: np.ndarray, options: BTGOptions, fold: tuple[int, int] | None
) -> None:
    """Write the nonzero weights and the options to ``path`` (compressed npz), atomically;
    ``fold`` (k, K) is stored with the options of a cross-fitting model."""
    flat = weights.reshape(-1)
    index = np.flatnonzero(flat)
    # sorted flat indices < 2**31: gaps compress well
    gaps = np.diff(index, prepend=0).astype(np.uint32)
    stored = asdict(options)
    if fold is not None:  # only then: a full model's file stays as before cross-fitting
        stored["fold"] = list(fold)
    with atomic_open(path, "wb") as f:
        np.savez_compressed(
            f,
            format=np.array(FORMAT),
            options=np.array(json.dumps(stored)),
            index_gaps=gaps,
            values=flat[index],
        )


def read_model(path: str | Path) -> tuple[np.ndarray, BTGOptions, tuple[int, int] | None]:
    """The weight table, options and cross-fitting fold of a file written by :func:`write_model`.

    Raises:
        WordorderError: the file is missing, not a BTG model, or corrupt.
    """
    hint = "give the model file written by btg-train (retrain if it was damaged)"
    if not Path(path).is_file():
        raise WordorderError("BTG model file not found", path=path, hint=hint)
    try:
        with np.load(path, allow_pickle=False) as z:
            if "format" not in z.files or str(z["format"]) != FORMAT:
                raise WordorderError("not a BTG preorderer model", path=path, hint=hint)
            raw = json.loads(str(z["options"]))
            known = {f.name for f in fields(BTGOptions)}
            options = BTGOptions(**{k: v for k, v in raw.items() if k in known}).check()
            gaps, values = z["index_gaps"], z["values"]
            fold = [int(x) for x in raw["fold"]] if "fold" in raw else None
    except WordorderError:
        raise
    except (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile) as err:
        raise WordorderError(
            f"not a readable BTG preorderer model ({type(err).__name__}: {err})",
            path=path,
            hint=hint,
        ) from None
    size = 2 << options.hash_bits
    index = np.cumsum(gaps, dtype=np.int64)
    if (
        gaps.dtype != np.uint32
        or index.ndim != 1
        or index.shape != values.shape
        or (len(index) and (index[-1] >= size or (gaps[1:] == 0).any()))
    ):
        raise WordorderError("corrupt BTG model: weight indices out of range", path=path, hint=hint)
    flat = np.zeros(size, np.float32)
    flat[index] = values
    return flat.reshape(-1, 2), options, (fold[0], fold[1]) if fold is not None else None
