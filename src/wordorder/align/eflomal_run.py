"""Word alignment of a parallel corpus with eflomal (Östling & Tiedemann 2016), symmetrized.

All splits of a pair (train, dev, tests) are aligned *together*, as is standard: the
statistics of the big training set help the small test sets, and no gold data are used. eflomal
runs once and writes both directions (source→target and target→source, both in source-target
``i-j`` orientation); they are symmetrized (grow-diag-final-and by default) and cut back into
one Pharaoh file per split, all written atomically (all or none).

Sentence pairs with an empty side, or a side of 1024 words or more (which eflomal's input
format cannot hold), are left out of eflomal's input and get an empty alignment line.

eflomal 2.0.0 has no seed option: its C sampler seeds itself from ``/dev/urandom``, so two
runs give slightly different alignments. ``seed`` is recorded in the stats only.
"""

from __future__ import annotations

import gzip
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from wordorder.align.pharaoh import check_ranges, format_pharaoh, parse_pharaoh
from wordorder.align.symmetrize import METHODS, symmetrize_flat
from wordorder.errors import WordorderError
from wordorder.io import atomic_paths, read_parallel

DEFAULTS: dict = {
    "model": 3,
    "length": 1.0,
    "symmetrize": "grow-diag-final-and",
    "n_samplers": 3,
    "null_prior": 0.2,
}
MAX_LEN = 1024  # eflomal's text format writes longer sentences as empty


def check_options(options: dict | None) -> dict:
    """Options with defaults filled in; unknown keys or bad values raise WordorderError."""
    opts = {**DEFAULTS, **(options or {})}
    unknown = set(opts) - set(DEFAULTS)
    if unknown:
        raise WordorderError(
            f"unknown align option(s): {', '.join(sorted(unknown))}",
            hint=f"known options: {', '.join(DEFAULTS)}",
        )
    if opts["model"] not in (1, 2, 3):
        raise WordorderError(f"align.model must be 1, 2 or 3, not {opts['model']!r}")
    if not isinstance(opts["length"], (int, float)) or opts["length"] <= 0:
        raise WordorderError(f"align.length must be a positive number, not {opts['length']!r}")
    if opts["symmetrize"] not in METHODS:
        raise WordorderError(
            f"align.symmetrize must be one of {', '.join(METHODS)}, not {opts['symmetrize']!r}"
        )
    if not isinstance(opts["n_samplers"], int) or opts["n_samplers"] < 1:
        raise WordorderError(
            f"align.n_samplers must be a positive integer, not {opts['n_samplers']!r}"
        )
    return opts


def run_eflomal(
    src_lines: list[str],
    tgt_lines: list[str],
    options: dict | None = None,
    work_dir: Path | None = None,
) -> dict:
    """Align line-aligned tokenized sentences in both directions.

    Returns:
        ``{"src_lens" [S], "tgt_lens" [S], "fwd" [N, 2], "fwd_offsets" [S + 1], "rev" [M, 2],
        "rev_offsets" [S + 1], "left_out" int, "too_long" int, "seconds" float}``, links 0-based in
        source-target orientation, one entry per input line (left-out pairs have none).
    """
    import eflomal

    opts = check_options(options)
    if len(src_lines) != len(tgt_lines):
        raise WordorderError(f"{len(src_lines)} source but {len(tgt_lines)} target sentences")
    # eflomal's reader splits on any whitespace too, so these are the lengths its links index
    sl = np.fromiter((len(line.split()) for line in src_lines), np.int64, len(src_lines))
    tl = np.fromiter((len(line.split()) for line in tgt_lines), np.int64, len(tgt_lines))
    too_long = (sl >= MAX_LEN) | (tl >= MAX_LEN)
    keep = (sl > 0) & (tl > 0) & ~too_long
    kept = np.flatnonzero(keep)
    out = {
        "src_lens": sl,
        "tgt_lens": tl,
        "left_out": int((~keep).sum()),
        "too_long": int(too_long.sum()),
    }
    n_all = len(sl)
    t0 = time.perf_counter()
    if len(kept) == 0:
        empty = np.empty((0, 2), np.int64), np.zeros(n_all + 1, np.int64)
        return {
            **out,
            "fwd": empty[0],
            "fwd_offsets": empty[1],
            "rev": empty[0],
            "rev_offsets": empty[1],
            "seconds": 0.0,
        }
    with tempfile.TemporaryDirectory(dir=work_dir, prefix=".eflomal.") as tmp:
        tmp_path = Path(tmp)
        src_bin, tgt_bin = tmp_path / "src.efl", tmp_path / "tgt.efl"
        with open(src_bin, "wb") as f:
            eflomal.to_eflomal_text_file((src_lines[k] for k in kept), f)
        with open(tgt_bin, "wb") as f:
            eflomal.to_eflomal_text_file((tgt_lines[k] for k in kept), f)
        fwd_file, rev_file = tmp_path / "fwd", tmp_path / "rev"
        print(
            f"eflomal: aligning {len(kept)} sentence pairs ({out['left_out']} empty or too long "
            f"left out), model {opts['model']}, length {opts['length']}",
            file=sys.stderr,
            flush=True,
        )
        # quiet=False: eflomal prints its command line and each model's iterations to stderr
        try:
            eflomal.align(
                str(src_bin),
                str(tgt_bin),
                links_filename_fwd=str(fwd_file),
                links_filename_rev=str(rev_file),
                model=opts["model"],
                n_samplers=opts["n_samplers"],
                quiet=False,
                rel_iterations=float(opts["length"]),
                null_prior=float(opts["null_prior"]),
            )
        except SystemExit:  # eflomal's wrapper exits when it cannot find its binary
            raise WordorderError(
                "eflomal's aligner binary could not be run",
                hint="reinstall the eflomal package (pip install eflomal==2.0.0)",
            ) from None
        sys.stderr.flush()
        result = {}
        for name, file in (("fwd", fwd_file), ("rev", rev_file)):
            if not file.is_file():
                raise WordorderError(
                    f"eflomal wrote no {name} alignment file",
                    path=file,
                    hint="see eflomal's messages above (out of memory?)",
                )
            flat, _, off = parse_pharaoh(file.read_bytes(), path=file)
            if len(off) - 1 != len(kept):
                raise WordorderError(
                    f"eflomal wrote {len(off) - 1} lines for {len(kept)} sentence pairs",
                    path=file,
                    hint="eflomal stopped early: see its messages above",
                )
            check_ranges(flat, off, sl[kept], tl[kept], path=file)
            result[name], result[name + "_offsets"] = _scatter(flat, off, kept, n_all)
    return {**out, **result, "seconds": time.perf_counter() - t0}


def _scatter(
    flat: np.ndarray, offsets: np.ndarray, rows: np.ndarray, n_all: int
) -> tuple[np.ndarray, np.ndarray]:
    """Place the sentences of a flat alignment at lines ``rows`` of an ``n_all``-line corpus."""
    counts = np.zeros(n_all, np.int64)
    counts[rows] = np.diff(offsets)
    new_offsets = np.zeros(n_all + 1, np.int64)
    np.cumsum(counts, out=new_offsets[1:])
    return flat, new_offsets  # rows are increasing, so the link order is unchanged


def align_corpus(
    src_paths: list[Path],
    tgt_paths: list[Path],
    out_paths: list[Path],
    options: dict,
    seed: int = 1,
    work_dir: Path | None = None,
) -> dict:
    """Align the splits together and write one symmetrized Pharaoh file per split.

    Args:
        src_paths, tgt_paths: tokenized (space-separated) splits, line-aligned pairwise.
        out_paths: one output per split; all are written, or none.
        options: ``model`` (1 IBM1, 2 +HMM, 3 +fertility; default 3), ``length`` (relative number of
            iterations, default 1.0), ``symmetrize`` (one of :data:`METHODS`), ``n_samplers``,
            ``null_prior``.
        seed: recorded only (eflomal 2.0.0 cannot be seeded).
        work_dir: folder for eflomal's temporary files (default: the system's).

    Returns:
        Stats: sentences per split, links per sentence, the unaligned share of source and target
        words, the pairs left out, and seconds.
    """
    opts = check_options(options)
    if not (len(src_paths) == len(tgt_paths) == len(out_paths)) or not src_paths:
        raise WordorderError(
            "align_corpus needs one source, target and output path per split (at least one)"
        )
    t0 = time.perf_counter()
    src_lines: list[str] = []
    tgt_lines: list[str] = []
    sizes = []
    for sp, tp in zip(src_paths, tgt_paths):
        s, t = read_parallel(sp, tp)
        src_lines += s
        tgt_lines += t
        sizes.append(len(s))
    r = run_eflomal(src_lines, tgt_lines, opts, work_dir)
    sl, tl = r["src_lens"], r["tgt_lens"]
    links, offsets = symmetrize_flat(
        r["fwd"], r["fwd_offsets"], r["rev"], r["rev_offsets"], sl, tl, opts["symmetrize"]
    )
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    with atomic_paths(*out_paths) as temps:
        for k, tmp in enumerate(temps):
            a, b = offsets[bounds[k]], offsets[bounds[k + 1]]
            data = format_pharaoh(links[a:b], offsets[bounds[k] : bounds[k + 1] + 1] - a)
            tmp.write_bytes(gzip.compress(data) if Path(out_paths[k]).suffix == ".gz" else data)
    sent = np.repeat(np.arange(len(sl)), np.diff(offsets))
    n_src, n_tgt = int(sl.sum()), int(tl.sum())
    src_aligned = len(np.unique(sent * MAX_LEN + links[:, 0])) if len(links) else 0
    tgt_aligned = len(np.unique(sent * MAX_LEN + links[:, 1])) if len(links) else 0
    return {
        "sentences_per_split": sizes,
        "sentences": len(sl),
        "left_out_pairs": r["left_out"],
        "too_long_pairs": r["too_long"],
        "links": len(links),
        "links_per_sentence": len(links) / max(1, len(sl)),
        "forward_links": len(r["fwd"]),
        "reverse_links": len(r["rev"]),
        "unaligned_source": 1 - src_aligned / max(1, n_src),
        "unaligned_target": 1 - tgt_aligned / max(1, n_tgt),
        "options": opts,
        "seed": seed,
        "seeded": False,
        "seconds_eflomal": round(r["seconds"], 2),
        "seconds": round(time.perf_counter() - t0, 2),
    }
