"""The ``wordorder`` subcommands of the corpus stage: fetching sources, splits, further references
(registered by :mod:`wordorder.cli`)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

from wordorder.errors import WordorderError


def cmd_fetch(a: argparse.Namespace) -> None:
    from wordorder.corpus.pairdata import pair_langs
    from wordorder.corpus.sources import fetch_source
    from wordorder.temps import remove_legacy_fetch_dirs

    src, tgt = pair_langs(a.pair)
    if a.lang not in (src, tgt):
        raise WordorderError(f"language '{a.lang}' is not part of the pair {a.pair}")
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_legacy_fetch_dirs(out.parent, time.time())
    # Both sides are read (to check that they line up); only this job's side is written.
    n = fetch_source(
        a.spec,
        src,
        tgt,
        out if a.lang == src else None,
        out if a.lang == tgt else None,
        Path(a.cache),
    )
    print(f"{out}: {n} lines")


def cmd_split(a: argparse.Namespace) -> None:
    from wordorder.corpus.runner import make_splits, write_splits

    table = make_splits(a.pair, a.data, a.clean, a.seed, Path(a.tok_dir))
    write_splits(table, Path(a.output))
    print(
        json.dumps(
            {"clean": table["clean"], "overlap": table["overlap"], "sizes": table["sizes"]},
            indent=1,
        )
    )


def cmd_select(a: argparse.Namespace) -> None:
    from wordorder.corpus.runner import select_split

    n = select_split(
        Path(a.splits), a.split, Path(a.raw), Path(a.tok), Path(a.out_raw), Path(a.out_tok)
    )
    print(f"{a.out_raw}: {n} lines")


def cmd_reference(a: argparse.Namespace) -> None:
    from wordorder.corpus.pairdata import pair_langs
    from wordorder.corpus.references import prepare_reference

    n = prepare_reference(a.spec, a.index - 1, *pair_langs(a.pair), Path(a.first), Path(a.output))
    print(f"{a.output}: {n} lines")


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add("fetch", cmd_fetch, "materialise one side of a corpus source")
    s.add_argument("--spec", type=_json, required=True, help="the source as JSON (kind + keys)")
    s.add_argument("--pair", required=True)
    s.add_argument("--lang", required=True)
    s.add_argument("--cache", required=True, help="download cache folder")
    s.add_argument("--output", required=True)

    s = add("split", cmd_split, "clean the training corpus and decide the splits")
    s.add_argument("--pair", required=True)
    s.add_argument("--data", type=_json, required=True, help="the pair's data block as JSON")
    s.add_argument("--clean", type=_json, required=True)
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--tok-dir", required=True)
    s.add_argument("--output", required=True)

    s = add("select", cmd_select, "write one split of one language")
    for name in ("--splits", "--split", "--raw", "--tok", "--out-raw", "--out-tok"):
        s.add_argument(name, required=True)

    s = add(
        "reference", cmd_reference, "check and write a test set's further reference (extra_refs)"
    )
    s.add_argument("--spec", type=_json, required=True, help="the test set's config entry (JSON)")
    for name in ("--pair", "--first", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--index", type=int, required=True, help="1 = the first extra reference")
