"""The summary table of ``check.sh peers``: what bench_peers.py and bench_peers_decode.py wrote.

    python3 benchmarks/gpu/peers_summary.py TRAIN.json DECODE.json

Either file may be missing or incomplete (a phase stopped by its time limit): the table then
shows what was finished and says what is missing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def load(path: str) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def training(rec: dict | None) -> list[str]:
    if rec is None:
        return ["training: no results (see peers_train.log)"]
    arch = rec["arch"]
    peak = max(rec["peaks"])
    peak_s = f"{peak / 1e12:.0f} TFLOP/s" if peak >= 1e12 else f"{peak / 1e9:.1f} GFLOP/s"
    lines = [
        f"training on {rec['device']}: Transformer {arch['enc_layers']}+{arch['dec_layers']} "
        f"d {arch['d']}, {'bf16 AMP' if rec['args'].get('amp') == 'True' else 'fp32'}, "
        f"torch {rec['torch']}, eole {rec['eole']}; MFU against {rec['peak_name']} "
        f"{peak_s}"
        + (f" (data sheet {rec['datasheet_peak'] / 1e12:.0f})" if rec.get("datasheet_peak") else "")
        + ("" if rec.get("complete") else " — INCOMPLETE: stopped before the last run"),
        "",
        "| batch tokens | toolkit | target tok/s | pairs/s | target tok/update | MFU "
        "| MFU (data sheet) | process wall s |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    walls: dict[tuple[str, str], list[float]] = {}
    for r in rec["rows"]:
        walls.setdefault((str(r["batch_tokens"]), r["toolkit"]), []).append(r["wall_s"])
    ratios = []
    for size, s in rec["summary"].items():
        for name in ("eole", "wordorder"):
            if name in s:
                r = s[name]
                sheet = f"{100 * r['mfu_datasheet']:.1f} %" if "mfu_datasheet" in r else "-"
                wall = ", ".join(f"{w:.0f}" for w in walls.get((size, name), []))
                lines.append(
                    f"| {size} | {name} | {r['tgt_tok_s']:,.0f} | {r['pairs_s']:,.0f} "
                    f"| {r['tgt_per_update']:,.0f} | {100 * r['mfu']:.1f} % | {sheet} | {wall} |"
                )
        if "ratio" in s:
            q = s["ratio"]
            ratios.append(
                f"≤ {size} tokens: wordorder / eole target tok/s {q['tgt_tok_s']:.2f}×, "
                f"pairs/s {q['pairs_s']:.2f}×, MFU {q['mfu']:.2f}×"
            )
    failed = [f"FAILED: {name}: {error}" for name, error in rec.get("failed", {}).items()]
    return lines + [""] + (ratios or ["no batch size with both toolkits finished"]) + failed


def decoding(rec: dict | None) -> list[str]:
    if rec is None:
        return ["decoding: no results (see peers_decode.log)"]
    args = rec["args"]
    lines = [
        f"decoding on {rec['device']}: beam {args['beam']}, {args['test']} test sentences, "
        f"models trained on the CPU (eole {args['eole_updates']} updates, wordorder "
        f"{args['updates']}); equal BLEU: within {rec['bleu_tolerance']}"
        + ("" if rec.get("complete") else " — INCOMPLETE: stopped before the last run"),
        "",
        "| batching | toolkit | BLEU | output tok/s | sent/s | runs | decode s (runs) |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    ratios = []
    for batching, s in rec["summary"].items():
        size = (
            args["batch_sents"] + " sentences"
            if batching == "sents"
            else (args["batch_tokens_decode"] + " tokens")
        )
        for name in ("eole", "wordorder"):
            if name in s:
                r = s[name]
                secs = ", ".join(
                    f"{d['seconds']:.2f}"
                    for d in rec["decode"]
                    if d["toolkit"] == name and d["batching"] == batching
                )
                lines.append(
                    f"| {size} | {name} | {r['bleu']:.2f} | {r['out_tok_s']:,.0f} "
                    f"| {r['sent_s']:,.1f} | {r['runs']} | {secs} |"
                )
        if "ratio_out_tok_s" in s:
            verdict = (
                "equal BLEU"
                if s["equal_bleu"]
                else f"VOID: BLEU {s['bleu_gap']:.2f} apart, over {rec['bleu_tolerance']}"
            )
            ratios.append(
                f"by {size}: wordorder / eole output tok/s {s['ratio_out_tok_s']:.2f}× ({verdict})"
            )
    failed = [f"FAILED: {name}: {error}" for name, error in rec.get("failed", {}).items()]
    return lines + [""] + (ratios or ["no batching with both toolkits finished"]) + failed


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    train, decode = (load(p) for p in sys.argv[1:])
    print("\n".join(["== peers summary", *training(train), "", *decoding(decode)]))


if __name__ == "__main__":
    main()
