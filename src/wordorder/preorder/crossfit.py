"""Cross-fitting of the learned preorderers (docs/algorithms.md §CROSSFIT; the config's
preorder.btg.cross_fit and preorder.rvnn.cross_fit).

A preorderer applied to the sentences it was trained on reorders them better than unseen ones
(BTG on 20k Tanaka pairs: tau 0.965 on train, 0.85 on test), so an NMT model trained on such
preorders sees cleaner input than it will at test time. With K folds, training sentence i is in
fold i % K; model k is trained without fold k, and sentence i is preordered by model i % K, so
every training sentence gets an out-of-sample preorder. Other splits use the full model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from wordorder.errors import WordorderError

T = TypeVar("T")
Fold = tuple[int, int]  # (k, K): a model trained without fold k of K


def check_fold(fold: int | None, folds: int | None, n: int, method: str) -> Fold | None:
    """(fold, folds) checked against each other and the ``n`` training sentences; None: no folds.

    Raises:
        WordorderError: only one of them given, K < 2, k outside [0, K), or K > n.
    """
    if fold is None and folds is None:
        return None
    if fold is None or folds is None:
        raise WordorderError(
            "--fold and --folds go together",
            hint="give both (model k of K), or neither for the model of the whole training set",
        )
    if folds < 2:
        raise WordorderError(
            f"--folds {folds}: cross-fitting needs at least 2 folds",
            hint=f"omit --fold/--folds for one model (preorder.{method}.cross_fit: 1)",
        )
    if not 0 <= fold < folds:
        raise WordorderError(
            f"--fold {fold} is outside [0, {folds})",
            hint=f"give a fold 0..{folds - 1}",
        )
    if folds > n:
        raise WordorderError(
            f"{folds} folds for {n} training sentences: a fold model would have nothing left out",
            hint=f"lower preorder.{method}.cross_fit to at most {n}",
        )
    return fold, folds


def training_pool(n: int, fold: Fold | None) -> np.ndarray:
    """The sentence indices a model may be trained on: all, or those outside fold k (i % K != k)."""
    ids = np.arange(n)
    return ids if fold is None else ids[ids % fold[1] != fold[0]]


def fold_info(n: int, fold: Fold | None) -> dict:
    """What the stats JSON records of the folds (nothing without them: the K = 1 file as before)."""
    if fold is None:
        return {}
    k, folds = fold
    return {"fold": k, "folds": folds, "held_out": n - len(training_pool(n, fold))}


def check_models(tags: Sequence[Fold | None], paths: Sequence[Path]) -> None:
    """One full model, or K fold models in fold order (model k trained without fold k of K).

    Raises:
        WordorderError: naming the first model that does not fit.
    """
    folds = len(tags)
    hint = "give the full model, or all cross_fit fold models in fold order (fold0 fold1 ...)"
    for k, (tag, path) in enumerate(zip(tags, paths)):
        if folds == 1 and tag is not None:
            what = f"a fold model (fold {tag[0]} of {tag[1]}) given alone"
            raise WordorderError(what, path=path, hint=hint)
        if folds > 1 and tag != (k, folds):
            what = "the full model" if tag is None else f"fold {tag[0]} of {tag[1]}"
            message = f"model {k + 1} of {folds} is {what}, expected fold {k} of {folds}"
            raise WordorderError(message, path=path, hint=hint)


def apply_by_fold(n: int, models: Sequence[T], apply: Callable[[T, np.ndarray], list]) -> list:
    """``apply(model, ids)`` of each model k on the sentences i % K == k, put back in order."""
    out: list = [None] * n
    for k, model in enumerate(models):
        ids = np.arange(k, n, len(models))
        for i, result in zip(ids, apply(model, ids), strict=True):
            out[i] = result
    return out
