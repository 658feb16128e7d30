"""The ``wordorder`` subcommands of the alignment stage: one joint eflomal run over a pair's splits
(scored on a gold set when there is one) and one split's lines of it (registered by
:mod:`wordorder.cli`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from wordorder.errors import WordorderError


def _gold_sentences(a: argparse.Namespace, tmp: Path) -> tuple[Path, Path, list[int], list[int]]:
    """Write the gold set's sentences as an extra split (source side first), for
    aligning with the corpus."""
    from wordorder.align.aer import read_src_tgt

    src, tgt = read_src_tgt(a.gold_pairs)
    if a.gold_swap:
        src, tgt = tgt, src
    paths = (tmp / "gold.src", tmp / "gold.tgt")
    for path, side in zip(paths, (src, tgt)):
        # whitespace-only tokens (U+3000 in KFTT) would vanish in a whitespace
        # split: keep their index
        path.write_text(
            "".join(" ".join(t if t.strip() else "<ws>" for t in s) + "\n" for s in side),
            encoding="utf-8",
        )
    return *paths, [len(s) for s in src], [len(t) for t in tgt]


def _gold_aer(
    a: argparse.Namespace, predicted: Path, src_lens: list[int], tgt_lens: list[int]
) -> dict:
    import numpy as np

    from wordorder.align.aer import aer, read_gold
    from wordorder.align.pharaoh import read_alignments

    gold_src, gold_tgt = (tgt_lens, src_lens) if a.gold_swap else (src_lens, tgt_lens)
    gold = read_gold(a.gold_links, gold_src, gold_tgt)
    sure, possible = gold.sure, gold.possible
    if a.gold_swap:
        sure, possible = [x[:, ::-1] for x in sure], [x[:, ::-1] for x in possible]
    result = aer(read_alignments(predicted, src_lens, tgt_lens), sure, possible)
    result["gold_links_out_of_range_dropped"] = gold.out_of_range_links
    return {
        k: (round(float(v), 4) if isinstance(v, (float, np.floating)) else v)
        for k, v in result.items()
    }


def cmd_align(a: argparse.Namespace) -> None:
    """Align the splits together; write one joint Pharaoh file (splits in order) and its stats.

    With a gold set (``--gold-pairs``, ``--gold-links``), its sentences are aligned together with
    the corpus as one more split, scored by AER, and left out of the joint file.
    """
    from wordorder.align.eflomal_run import align_corpus
    from wordorder.io import atomic_open, write_json
    from wordorder.temps import temp_dir

    if not (len(a.src) == len(a.tgt) == len(a.splits)):
        raise WordorderError("--src, --tgt and --splits need one value per split each")
    if bool(a.gold_pairs) != bool(a.gold_links):
        raise WordorderError("--gold-pairs and --gold-links go together")
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    with temp_dir(out.parent, out.name) as tmp:  # a killed run's is removed by the next one
        src, tgt = [Path(p) for p in a.src], [Path(p) for p in a.tgt]
        if a.gold_pairs:
            gold_src, gold_tgt, gold_src_lens, gold_tgt_lens = _gold_sentences(a, Path(tmp))
            src, tgt = src + [gold_src], tgt + [gold_tgt]
        parts = [Path(tmp) / f"{i}.align" for i in range(len(src))]
        stats = align_corpus(src, tgt, parts, a.options, seed=a.seed, work_dir=Path(tmp))
        lines = []
        with atomic_open(out) as f:
            for part in parts[: len(a.splits)]:
                text = part.read_text(encoding="utf-8")
                lines.append(text.count("\n"))
                f.write(text)
        aer_scores = _gold_aer(a, parts[-1], gold_src_lens, gold_tgt_lens) if a.gold_pairs else None
    stats = {"splits": dict(zip(a.splits, lines)), **stats}
    if aer_scores:
        stats["aer"] = {"gold": str(a.gold_links), **aer_scores}
    write_json(a.stats, stats)
    print(json.dumps(stats))


def cmd_align_split(a: argparse.Namespace) -> None:
    """Cut one split's lines out of the joint alignment file."""
    from wordorder.io import iter_lines, write_lines

    stats = json.loads(Path(a.stats).read_text(encoding="utf-8"))
    names = list(stats["splits"])
    if a.split not in names:
        raise WordorderError(
            f"split {a.split!r} is not in the joint alignment (it has {', '.join(names)})",
            path=a.stats,
            hint="rerun the align step",
        )
    start = sum(stats["splits"][n] for n in names[: names.index(a.split)])
    stop = start + stats["splits"][a.split]
    write_lines(a.output, (line for k, line in enumerate(iter_lines(a.joint)) if start <= k < stop))
    print(f"{a.output}: {stop - start} lines")


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add("align", cmd_align, "word-align the splits of a pair together (eflomal, symmetrized)")
    for name in ("--src", "--tgt", "--splits"):
        s.add_argument(
            name, nargs="+", required=True, help="one tokenized file (or name) per split"
        )
    s.add_argument("--output", required=True, help="the joint Pharaoh file, splits in order")
    s.add_argument(
        "--gold-pairs",
        help="gold set sentences, 'source ||| target' per line (awesome-align format)",
    )
    s.add_argument("--gold-links", help="gold links, 1-based, i-j sure and ipj possible")
    s.add_argument(
        "--gold-swap", action="store_true", help="the gold set's sides are target ||| source"
    )
    s.add_argument("--options", type=_json, default={}, help="the config's align block as JSON")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--stats", required=True)

    s = add("align-split", cmd_align_split, "one split's lines of the joint alignment")
    for name in ("--joint", "--stats", "--split", "--output"):
        s.add_argument(name, required=True)
