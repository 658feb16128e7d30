"""The convergence table: stop reasons, the kept evaluation, the end of each dev curve."""

from __future__ import annotations

import json
import math

import pytest
from cli_checks import run

from wordorder.errors import WordorderError
from wordorder.evaluate.convergence import convergence_markdown, run_summary


def log(bleus, best, summary=None):
    recs = []
    for i, (b, is_best) in enumerate(zip(bleus, best), start=1):
        recs.append({"step": 100 * i, "train_loss": 5.0 / i})
        recs.append({"step": 100 * i, "dev_bleu": b, "dev_ppl": 50.0 / i, "best": is_best})
    if summary:
        recs.append({"summary": summary})
    return recs


def test_summary_of_a_run_that_stopped_on_patience():
    recs = log(
        [5, 10, 12, 12.5, 12.4, 12.6, 12.3, 12.5],
        [1, 1, 1, 1, 0, 0, 0, 0],
        {"stop_reason": "patience", "steps": 800, "best_step": 400},
    )
    s = run_summary(recs)
    assert (s["evals"], s["steps"], s["best_step"], s["stop_reason"]) == (8, 800, 400, "patience")
    assert s["best_bleu"] == 12.5 and s["max_bleu"] == 12.6 and s["best_ppl"] == 12.5
    assert s["last_ppl"] == 50.0 / 8 and s["tail_bleu_change"] == pytest.approx(12.5 - 12.5)


def test_stop_reason_without_a_summary_record():
    recs = log([5, 10, 12, 11, 11], [1, 1, 1, 0, 0])
    assert run_summary(recs)["stop_reason"] == "unknown"
    assert run_summary(recs, patience=2)["stop_reason"] == "patience"
    assert run_summary(recs, patience=3)["stop_reason"] == "unknown"  # only 2 evals after the best
    assert run_summary(recs)["tail_bleu_change"] == 11 - 5
    assert math.isnan(run_summary(recs[:8])["tail_bleu_change"])  # fewer than TAIL + 1 evals
    with pytest.raises(WordorderError, match="no dev evaluation"):
        run_summary([{"step": 1, "train_loss": 3.0}])


def test_markdown_counts_the_patient_runs_and_says_how_much_they_still_moved():
    rows = [
        {
            "pair": "ja-en",
            "variant": v,
            "seed": 1,
            **run_summary(
                log([1, 2, 3, 3, 3, 3], [1, 1, 1, 0, 0, 0], {"stop_reason": r, "steps": 600})
            ),
        }
        for v, r in (("a", "patience"), ("b", "max_steps"))
    ]
    md = convergence_markdown(rows, "T")
    assert "1 of 2 runs stopped on patience" in md and "converged" not in md
    assert "dev BLEU still moved by +1.00 to +1.00 over their last 4 evaluations" in md
    assert "| ja-en | b | 1 | 600 | 300 | max_steps | 16.67 / 8.33 | 3.00 / 3.00 | +1.00 |" in md


def test_cli_writes_table_and_figure(tmp_path, capsys):
    runs = []
    for v in ("base", "sys"):
        for seed in (1, 2):
            path = tmp_path / f"{v}{seed}.jsonl"
            path.write_text(
                "".join(
                    json.dumps(r) + "\n"
                    for r in log(
                        [1, 4, 6, 6.5, 6.4, 6.3],
                        [1, 1, 1, 1, 0, 0],
                        {"stop_reason": "patience", "steps": 600},
                    )
                )
            )
            runs.append({"pair": "ja-en", "variant": v, "seed": seed, "metrics": str(path)})
    code, errors = run(
        [
            "convergence",
            "--runs",
            json.dumps({"runs": runs}),
            "--title",
            "T",
            "--md",
            tmp_path / "c.md",
            "--png",
            tmp_path / "c.png",
        ],
        capsys,
    )
    assert code == 0, errors
    assert (tmp_path / "c.md").read_text().count("| ja-en |") == 4
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
