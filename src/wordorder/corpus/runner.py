"""Clean the training corpus and cut the splits: the ``split`` and ``select`` steps.

``make_splits`` decides, once per pair, which lines of which fetched corpus form each split
(train, dev, test sets) and records it in ``splits.json``; ``select_split`` then writes one
split of one language. Lengths are counted on the tokenized text; the raw text is kept for
detokenized references.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.corpus.clean import CleanOptions, clean_parallel
from wordorder.corpus.overlap import remove_overlap
from wordorder.corpus.pairdata import is_holdout, pair_langs, split_names, split_spec
from wordorder.corpus.split import holdout_split
from wordorder.errors import WordorderError
from wordorder.io import atomic_open, read_lines, read_parallel, write_parallel
from wordorder.text.normalize import normalize_line

log = logging.getLogger(__name__)


def make_splits(
    pair: str, data: Mapping[str, Any], clean: Mapping[str, Any], seed: int, tok_dir: Path
) -> dict:
    """Return the split table: for every split, its corpus and the line numbers (0-based) taken.

    The training corpus is cleaned; holdout dev/test sets are drawn from the cleaned lines
    (so they obey the same length limits) and removed from training. Splits with a source of
    their own are used whole and unfiltered: official test sets are never altered. Then every
    training pair whose source or target occurs in a dev/test set leaves training
    (:mod:`wordorder.corpus.overlap`); the counts are in the table's ``overlap``.
    """
    src, tgt = pair_langs(pair)
    tok_dir = Path(tok_dir)
    train_src, train_tgt = read_parallel(tok_dir / f"train.{src}", tok_dir / f"train.{tgt}")
    kept, stats = clean_parallel(train_src, train_tgt, CleanOptions.from_dict(dict(clean)))
    names = split_names(data)
    holdouts = {
        n: split_spec(data, n)["holdout"] for n in names[1:] if is_holdout(split_spec(data, n))
    }
    splits: dict[str, dict] = {}
    sets: dict[str, list[tuple[str, str]]] = {}  # every dev/test set's pairs, tokenized
    for name in names[1:]:
        if name not in holdouts:
            s, t = read_parallel(tok_dir / f"{name}.{src}", tok_dir / f"{name}.{tgt}")
            _refuse_empty_lines(name, s, t, src, tgt, tok_dir.parent / "raw")
            splits[name] = {"corpus": name, "lines": list(range(len(s)))}
            sets[name] = list(zip(s, t))
    # A copy of an external dev/test pair in the corpus must not be drawn into a holdout (a test
    # sentence in dev would choose the best checkpoint on the test set): draw from the rest.
    external = [p for pairs in sets.values() for p in pairs]
    pool, _ = remove_overlap(kept, train_src, train_tgt, external) if external else (kept, {})
    parts = holdout_split(len(pool), holdouts, seed)
    for name in ["train", *holdouts]:
        splits[name] = {"corpus": "train", "lines": [pool[i] for i in parts[name]]}
        if name != "train":
            sets[name] = [(train_src[i], train_tgt[i]) for i in splits[name]["lines"]]
    splits = {name: splits[name] for name in names}
    held = [p for name in names[1:] for p in sets[name]]
    train_lines = sorted(splits["train"]["lines"] + list(set(kept) - set(pool)))
    splits["train"]["lines"], overlap = remove_overlap(train_lines, train_src, train_tgt, held)
    dev_test = _dev_test_overlap(sets, names)
    if dev_test:
        log.warning(
            "%s: dev sentences that also occur in a test set (the corpus repeats them): %s",
            pair,
            dev_test,
        )
    log.info(
        "%s: %d training pairs removed because they occur in a dev/test set (same pair %d, same "
        "source %d, same target %d)",
        pair,
        overlap["removed"],
        overlap["pair"],
        overlap["source"],
        overlap["target"],
    )
    if not splits["train"]["lines"]:
        raise WordorderError(
            (
                f"no training sentences left for {pair} after cleaning and "
                "removing the dev/test sentences"
            ),
            hint=f"cleaning removed {stats}; overlap with the dev/test sets removed {overlap}; "
            "relax clean.max_len / max_ratio, or use other dev/test sets",
        )
    return {
        "pair": pair,
        "seed": seed,
        "clean": stats,
        "overlap": overlap,
        "dev_test": dev_test,
        "sizes": {n: len(s["lines"]) for n, s in splits.items()},
        "splits": splits,
    }


def _dev_test_overlap(sets: Mapping[str, list[tuple[str, str]]], names: list[str]) -> dict:
    """For each test set, how many dev pairs share its source or target side ({} if none)."""
    if "dev" not in sets:
        return {}
    dev_src, dev_tgt = [s for s, _ in sets["dev"]], [t for _, t in sets["dev"]]
    out = {}
    for name in names[1:]:
        if name != "dev":
            _, counts = remove_overlap(range(len(dev_src)), dev_src, dev_tgt, sets[name])
            if counts["removed"]:
                out[name] = counts["removed"]
    return out


def _refuse_empty_lines(
    name: str, src_lines: list[str], tgt_lines: list[str], src: str, tgt: str, raw_dir: Path
) -> None:
    """A dev or test set is used whole: a line with no sentence on a side cannot be translated
    or scored, and usually means the two files are out of step."""
    for number, (a, b) in enumerate(zip(src_lines, tgt_lines), start=1):
        if not a.strip() or not b.strip():
            lang = src if not a.strip() else tgt
            raise WordorderError(
                f"empty line in the '{name}' set",
                path=raw_dir / f"{name}.{lang}",
                line=number,
                hint="every line of a dev/test set needs a sentence on both sides: remove the "
                "pair from both files (a training corpus may have empty lines: they are dropped)",
            )


def write_splits(table: dict, output: Path) -> None:
    with atomic_open(output) as f:
        json.dump(table, f, ensure_ascii=False)


def select_split(
    splits_json: Path, split: str, raw: Path, tok: Path, out_raw: Path, out_tok: Path
) -> int:
    """Write the lines of one split (raw, normalised text and tokenized text) for one language."""
    with open(splits_json, encoding="utf-8") as f:
        table = json.load(f)
    if split not in table["splits"]:
        raise WordorderError(
            f"no split named '{split}'",
            path=splits_json,
            hint=f"splits: {', '.join(table['splits'])}",
        )
    lines = table["splits"][split]["lines"]
    raw_lines, tok_lines = read_lines(raw), read_lines(tok)
    if len(raw_lines) != len(tok_lines):
        raise WordorderError(
            f"{len(raw_lines)} lines but the tokenized file {tok} has {len(tok_lines)}",
            path=raw,
            hint="delete the tokenized file and rerun",
        )
    write_parallel(
        [out_raw, out_tok],
        [(normalize_line(raw_lines[i]) for i in lines), (tok_lines[i] for i in lines)],
    )
    return len(lines)
