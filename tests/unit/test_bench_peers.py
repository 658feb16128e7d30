"""The FLOP count and eole log parser of benchmarks/bench_peers.py (eole itself is not needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from peers_lib import ARCH, Lengths, eole_window, parse_eole_log, training_flops, weights_per_token  # noqa: E402

# Report lines of a real eole 0.6.4 run (a smoke run of bench_peers.py, en-ja, 2 updates per report).
LOG = """\
[2026-11-25 18:43:03,311 INFO] Starting training on CPU, could be very slow
[2026-11-25 18:46:54,250 INFO] Step  2/    6; acc: 0.0; ppl: 8114.90; xent: 9.00; aux: 0.000; mtp: 0.000; attn_ent: 1.844; lr: 9.88e-07; sents:     133; bsz:  457/ 770/66;   4/  7 tok/s;    231 sec;
[2026-11-25 18:51:03,650 INFO] Step  4/    6; acc: 0.0; ppl: 8159.32; xent: 9.01; aux: 0.000; mtp: 0.000; attn_ent: 2.279; lr: 1.98e-06; sents:     107; bsz:  563/ 850/54;   5/  7 tok/s;    480 sec;
[2026-11-25 18:52:35,390 INFO] Step  6/    6; acc: 0.0; ppl: 8205.19; xent: 9.01; aux: 0.000; mtp: 0.000; attn_ent: 1.894; lr: 2.96e-06; sents:     124; bsz:  470/ 826/62;  10/ 18 tok/s;    572 sec;
[2026-11-25 18:52:35,405 INFO] Saving optimizer and weights to step_6, and symlink to /x/model
"""


def test_weights_per_token_match_the_linear_layers_of_the_model():
    from wordorder.models import build_model

    model = build_model({"preset": "small", "norm": "pre"}, 8000)
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    src, tgt = weights_per_token(
        ARCH["d"], ARCH["ff"], ARCH["enc_layers"], ARCH["dec_layers"], 8000
    )
    # every weight matrix once (the tied output aside)
    assert src + tgt - 8000 * ARCH["d"] == linear
    assert model.output_weight.numel() == 8000 * ARCH["d"]


def test_training_flops_by_hand():
    arch = {**ARCH, "d": 2, "ff": 4, "enc_layers": 1, "dec_layers": 1}
    lengths = Lengths.of([(2, 3), (4, 1)])  # ΣS=6, ΣS²=20, ΣT=4, ΣT²=10, ΣST=10
    assert (lengths.ss, lengths.tt, lengths.st) == (20 / 6, 10 / 4, 10 / 4)
    # per source token 4·4+2·2·4 + 2·4 = 40 weights; per target token 6·4+16 + 10·2 = 60
    expected = 6 * (40 * 6 + 60 * 4) + 12 * 2 * (20 / 6 * 6 + (10 / 4 + 10 / 4) * 4)
    assert training_flops(6, 4, lengths, vocab=10, arch=arch) == pytest.approx(expected)


def test_eole_window_from_reports():
    reports = parse_eole_log(LOG)
    assert [(r.step, r.sents, r.src_per_batch, r.tgt_per_batch) for r in reports] == [
        (2, 133, 457, 770),
        (4, 107, 563, 850),
        (6, 124, 470, 826),
    ]
    w = eole_window(reports, 2, 6, 2)
    assert w == {
        "seconds": pytest.approx(91.74 + 249.4),
        "sents": 107 + 124,
        "src_tokens": 2 * (563 + 470),
        "tgt_tokens": 2 * (850 + 826),
    }
    with pytest.raises(ValueError, match="no report for steps"):
        eole_window(reports, 2, 8, 2)


def test_eole_config_goes_on_from_a_checkpoint_only_when_asked(tmp_path):
    from peers_lib import eole_config

    def config(train_from=None):
        paths = (tmp_path / "s", tmp_path / "t", tmp_path / "v", tmp_path / "o")
        return eole_config(*paths, 2000, 5000, 100, 1, 20000, ARCH, train_from)

    assert "train_from" not in config()["training"]
    training = config(tmp_path / "m3000" / "model")["training"]
    assert training["train_from"] == str(tmp_path / "m3000" / "model")
    assert training["reset_optim"] == "none"  # optimizer state and step count restored
    assert training["train_steps"] == 5000


def test_a_longer_eole_training_goes_on_from_the_longest_shorter_one_with_equal_settings(tmp_path):
    import json

    from bench_peers_decode import earlier_eole

    def trained(folder, **settings):
        (tmp_path / folder).mkdir()
        record = {"settings": {"vocab": "4000", **settings}, "row": {}}
        (tmp_path / folder / "done.json").write_text(json.dumps(record))

    want = {"vocab": "4000", "updates": "5000"}
    assert earlier_eole(tmp_path, want) is None
    trained("model_eole_2000", updates="2000")
    trained("model_eole", updates="3000")
    trained("model_eole_4000", updates="4000", vocab="8000")  # other settings: not a start
    trained("model_wordorder", updates="4500")  # the other toolkit: never
    assert earlier_eole(tmp_path, want) == (tmp_path / "model_eole", 3000)
    # fewer than 100 updates to go leave no timing window: train from scratch
    assert earlier_eole(tmp_path, {**want, "updates": "3100"}) == (
        tmp_path / "model_eole_2000",
        2000,
    )
    assert earlier_eole(tmp_path, {**want, "updates": "2000"}) is None


def test_round_ratios_pair_each_round_and_take_each_toolkits_fastest():
    from bench_peers_decode import round_ratios

    def row(toolkit, k, out_tokens, seconds, batching="sents"):
        return dict(
            toolkit=toolkit, round=k, out_tokens=out_tokens, seconds=seconds, batching=batching
        )

    rows = [
        row("eole", 1, 1000, 2.0),  # 500 tok/s
        row("wordorder", 1, 1100, 1.0),  # 1100
        row("eole", 2, 1000, 1.0),  # 1000: eole's fastest
        row("wordorder", 2, 1100, 2.0),  # 550
        row("wordorder", 1, 1, 100.0, "tokens"),  # another batching: not counted
    ]
    paired, best = round_ratios(rows, "sents")
    assert paired == pytest.approx([2.2, 0.55])
    assert best == pytest.approx(1100 / 1000)


def test_wordorder_clock_times_every_update_of_the_trainer(tmp_path):
    """bench_peers times wordorder by wrapping Trainer.update, the method both of the trainer's
    paths run in (eager, and replayed from CUDA graphs; a GPU call found 0 updates timed when the
    clock wrapped the eager path's function, which the graphed one bypasses). Here, on the CPU,
    the eager path: one record an update, in order, with its sentences and tokens."""
    import json
    import random

    from bench_peers import read_pieces, wordorder_child

    from wordorder.text.subword import SubwordModel
    from wordorder.text.subword_train import train_sentencepiece

    rng = random.Random(0)
    words = [f"w{i}" for i in range(40)]
    lines = [" ".join(rng.choices(words, k=rng.randint(3, 9))) for _ in range(300)]
    (tmp_path / "text").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # (the project's trainer: it keeps sentencepiece's global log settings as they were)
    sp = SubwordModel(train_sentencepiece([tmp_path / "text"], tmp_path / "spm", vocab_size=300))
    pieces = [" ".join(sp.encode(line.split())) for line in lines]
    for side in ("src", "tgt"):
        (tmp_path / f"train.{side}").write_text("\n".join(pieces) + "\n", encoding="utf-8")
    job = {
        "data": str(tmp_path), "out": str(tmp_path / "run"), "threads": 1, "device": "cpu",
        "seed": 1, "batch_tokens": 120, "steps": 6, "report_every": 2, "timed_from": 2,
        "arch": {"d": 16, "ff": 32, "heads": 2, "enc_layers": 1, "dec_layers": 1},
    }  # fmt: skip
    wordorder_child(job)
    records = json.loads((tmp_path / "run" / "updates.json").read_text())
    assert len(records) == 6
    times = [r[0] for r in records]
    assert times == sorted(times)
    n_pieces = {len(p) for p in read_pieces(tmp_path / "train.src")}
    for _, sents, src_tokens, tgt_tokens in records:
        assert sents >= 1
        # every sentence with its EOS; the target with BOS and EOS, counted once (EOS-shifted)
        assert min(n_pieces) + 1 <= src_tokens / sents <= max(n_pieces) + 1
        assert src_tokens == tgt_tokens  # the same sentences on both sides
