"""Helpers of ``bench_peers.py``: eole's own venv, its config, its log, and the FLOP count.

Kept apart from the script so that the unit test can check the FLOP formula and the log
parser without installing eole.

eole runs either from ``--work``/venv (installed with pip on the first run) or, where nothing can
be installed (the GPU machine: ``benchmarks/gpu/check.sh peers``), from a given python with
eole's wheels on a PYTHONPATH of their own (:class:`Eole`, ``--eole-python`` and
``--eole-pythonpath``), so that neither toolkit imports the other's packages.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

EOLE_VERSION = "0.6.4"
# The shared architecture (the small preset of wordorder, pre-norm as eole's decoder is).
ARCH = {
    "d": 256,
    "ff": 1024,
    "heads": 4,
    "enc_layers": 3,
    "dec_layers": 3,
    "dropout": 0.1,
    "attention_dropout": 0.0,
    "label_smoothing": 0.1,
    "betas": (0.9, 0.98),
    "eps": 1e-9,
    "noam_factor": 2.0,
    "warmup": 4000,
}
# Transformer-base (Vaswani et al. 2017; wordorder's base preset) with the same settings
# otherwise; tiny: a smoke test of the scripts (benchmarks/gpu/check.sh peers, rehearsed on a CPU).
PRESETS = {
    "tiny": {**ARCH, "d": 64, "ff": 256, "heads": 4, "enc_layers": 2, "dec_layers": 2},
    "small": ARCH,
    "base": {**ARCH, "d": 512, "ff": 2048, "heads": 8, "enc_layers": 6, "dec_layers": 6},
}


# -- the FLOP count --------------------------------------------------------------------


def weights_per_token(
    d: int, ff: int, enc_layers: int, dec_layers: int, vocab: int
) -> tuple[int, int]:
    """Matmul weights a source token and a target token go through (biases, norms ignored).

    Source: every encoder layer (Q, K, V, O: 4d², FFN: 2·d·ff) and the cross-attention K, V
    of every decoder layer (2d²). Target: every decoder layer's self-attention (4d²),
    cross-attention Q, O (2d²), FFN (2·d·ff), and the output projection (V·d).
    """
    src = enc_layers * (4 * d * d + 2 * d * ff) + dec_layers * 2 * d * d
    tgt = dec_layers * (6 * d * d + 2 * d * ff) + vocab * d
    return src, tgt


@dataclass(frozen=True)
class Lengths:
    """Corpus means of the attention terms: ΣS²/ΣS, ΣT²/ΣT, ΣS·T/ΣT (S, T: tokens per pair)."""

    ss: float
    tt: float
    st: float

    @classmethod
    def of(cls, pairs: list[tuple[int, int]]) -> Lengths:
        s = sum(a for a, _ in pairs)
        t = sum(b for _, b in pairs)
        return cls(
            sum(a * a for a, _ in pairs) / s,
            sum(b * b for _, b in pairs) / t,
            sum(a * b for a, b in pairs) / t,
        )


def training_flops(
    src_tokens: float, tgt_tokens: float, lengths: Lengths, vocab: int, arch: dict = ARCH
) -> float:
    """Model FLOPs of training (forward + backward = 3 × forward) on these tokens:

    6·(W_src·S + W_tgt·T) + 12·d·(L_enc·ρ_ss·S + L_dec·(ρ_tt + ρ_st)·T)

    W_src, W_tgt from :func:`weights_per_token`; the second term is the attention scores and
    the weighted sums (2·d FLOPs each per query–key pair, forward), encoder self-attention over
    S², decoder self-attention over T² (counted in full, as both toolkits compute it), cross
    attention over S·T, with the per-token means ρ of the corpus (:class:`Lengths`).
    """
    d, le, ld = arch["d"], arch["enc_layers"], arch["dec_layers"]
    w_src, w_tgt = weights_per_token(d, arch["ff"], le, ld, vocab)
    return 6.0 * (w_src * src_tokens + w_tgt * tgt_tokens) + 12.0 * d * (
        le * lengths.ss * src_tokens + ld * (lengths.tt + lengths.st) * tgt_tokens
    )


def matmul_peak(
    threads: int, n: int = 2048, repeats: int = 10, bf16: bool = False, device: str = "cpu"
) -> float:
    """Best fp32 (``bf16``: bf16) FLOP/s (2·n³ per product) of ``torch.mm`` on ``threads``
    threads (on ``device``): the measurement of bench_variants.py, on a set thread count."""
    import torch
    from bench_variants import matmul_peak as peak  # the benchmarks folder is on sys.path

    torch.set_num_threads(threads)
    flops = peak(n, repeats, device, dtype=torch.bfloat16 if bf16 else torch.float32)
    if device != "cpu":
        torch.cuda.empty_cache()  # the training processes get the GPU's memory
    return flops


def parse_options(items: list[str] | None, flag: str) -> dict:
    """``KEY=VALUE`` items (a command line's repeated ``flag``) as a dict, each value read as
    YAML (``true`` → True, ``8`` → 8, ``[1, 2]`` → a list, ``fp32`` → a string)."""
    import yaml

    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            sys.exit(f"error: {flag} {item!r}: expected KEY=VALUE")
        out[key.strip()] = yaml.safe_load(value)
    return out


# -- eole's training log ---------------------------------------------------------------

# eole/utils/statistics.py, Statistics.output: "[<asctime> INFO] Step 50/  300; acc: ...;
# sents: 10230; bsz: 1530/1710/205; 4500/5012 tok/s; 80 sec;" (bsz: per-batch means of source
# tokens, non-pad target tokens and sentences since the previous report).
_STEP = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) [A-Z]+\] Step\s+(\d+)/\s*\d+;.*?"
    r"sents:\s*(\d+); bsz:\s*(\d+)/\s*(\d+)/\s*(\d+);"
)


@dataclass(frozen=True)
class Report:
    step: int
    time: float  # seconds (log clock, 1 ms resolution)
    sents: int
    src_per_batch: int
    tgt_per_batch: int


def parse_eole_log(text: str) -> list[Report]:
    out = []
    for line in text.splitlines():
        m = _STEP.match(line)
        if m:
            stamp = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
            out.append(
                Report(int(m.group(2)), stamp, int(m.group(3)), int(m.group(4)), int(m.group(5)))
            )
    return out


def eole_window(reports: list[Report], first: int, last: int, every: int) -> dict[str, float]:
    """Updates first+1..last from the reports at steps first and last (every ``every``).

    Token counts are eole's rounded per-batch means × batches (``every`` per report, one batch
    per update): off by at most 0.5 token per batch.
    """
    by_step = {r.step: r for r in reports}
    missing = [s for s in range(first, last + 1, every) if s not in by_step]
    if missing:
        raise ValueError(f"eole's log has no report for steps {missing[:5]}")
    inside = [by_step[s] for s in range(first + every, last + 1, every)]
    return {
        "seconds": by_step[last].time - by_step[first].time,
        "sents": sum(r.sents for r in inside),
        "src_tokens": sum(r.src_per_batch * every for r in inside),
        "tgt_tokens": sum(r.tgt_per_batch * every for r in inside),
    }


# -- eole's venv and config ------------------------------------------------------------


@dataclass(frozen=True)
class Eole:
    """How to run eole: ``python -m eole.bin.main`` (what the ``eole`` command runs), with
    ``pythonpath`` (None: the caller's environment) as the PYTHONPATH of its processes."""

    python: Path
    pythonpath: str | None = None

    def command(self, *args) -> list:
        return [self.python, "-m", "eole.bin.main", *args]

    def env(self, base: dict) -> dict:
        env = dict(base)
        if self.pythonpath is not None:
            env["PYTHONPATH"] = self.pythonpath  # eole's packages alone, not wordorder's
        return env


def external_eole(python: str, pythonpath: str | None) -> Eole:
    """eole from ``python`` with ``pythonpath`` (wheels installed with ``pip --target``), checked
    to import at the expected version."""
    found = shutil.which(python) or python
    eole = Eole(Path(found), pythonpath)
    check = (
        "import importlib.metadata as m, eole.bin; "
        f"assert m.version('eole') == '{EOLE_VERSION}', m.version('eole')"
    )
    proc = subprocess.run(
        [found, "-W", "ignore", "-c", check],
        capture_output=True,
        text=True,
        env=eole.env(dict(os.environ)),
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        sys.exit(
            f"error: eole {EOLE_VERSION} does not import from {found} with PYTHONPATH="
            f"{pythonpath}: {last[:300]}"
        )
    print(f"eole {EOLE_VERSION}: {found}, PYTHONPATH={pythonpath}", flush=True)
    return eole


def eole_python(work: Path, constraints: Path) -> Path:
    """The python of ``work/venv`` with eole installed (installed on the first call)."""
    venv = work / "venv"
    py = venv / "bin" / "python"
    check = (
        "import importlib.metadata as m, eole, aiohttp; assert "
        f"m.version('eole') == '{EOLE_VERSION}'"
    )
    if py.is_file() and subprocess.run([py, "-c", check], capture_output=True).returncode == 0:
        print(f"eole {EOLE_VERSION}: reusing {venv}", flush=True)
        return py
    shutil.rmtree(venv, ignore_errors=True)
    log = work / "install.log"
    print(f"installing eole {EOLE_VERSION} into {venv} (log: {log}) ...", flush=True)
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as f:
        # eole imports aiohttp without declaring it; the constraints keep torch the CPU build.
        ok = (
            subprocess.run(
                [sys.executable, "-m", "venv", venv], stdout=f, stderr=subprocess.STDOUT
            ).returncode
            == 0
            and subprocess.run(
                [py, "-m", "pip", "install", "-c", constraints, f"eole=={EOLE_VERSION}", "aiohttp"],
                stdout=f,
                stderr=subprocess.STDOUT,
            ).returncode
            == 0
            and subprocess.run([py, "-c", check], stdout=f, stderr=subprocess.STDOUT).returncode
            == 0
        )
    if not ok:
        shutil.rmtree(venv, ignore_errors=True)
        sys.exit(
            f"error: {log}: installing eole {EOLE_VERSION} with pip failed (see the log's last "
            "lines); it needs PyPI or a local index holding eole and its dependencies: rerun "
            "with network access, or pass --work to a folder whose venv/ already has them (pip "
            f"install -c constraints.txt eole=={EOLE_VERSION} aiohttp)"
        )
    print(f"installed eole {EOLE_VERSION} in {time.perf_counter() - t0:.0f} s", flush=True)
    return py


def eole_config(
    src: Path,
    tgt: Path,
    vocab: Path,
    out: Path,
    batch_tokens: int,
    steps: int,
    report_every: int,
    seed: int,
    pairs: int,
    arch: dict = ARCH,
    train_from: Path | None = None,
    amp: bool = False,
    *,
    device: str = "cpu",
    workers: int | None = None,
    extra: dict | None = None,
) -> dict:
    """eole's train config for the shared architecture and schedule, on pre-segmented files;
    with ``train_from`` (an eole model folder), the training goes on from that checkpoint with
    its optimizer state and step count (``reset_optim none``) up to ``steps``. ``amp``: bf16
    mixed precision (``compute_dtype: bf16`` with ``use_amp``: float32 weights, torch's
    autocast, as wordorder's ``cpu_amp`` on the CPU and ``amp`` on CUDA). ``device``: ``cpu``,
    or ``cuda`` (GPU 0: ``gpu_ranks [0]``, eole's single-GPU mode). ``workers``: eole's data
    loader processes (None: none on the CPU, where they would take the training's cores, and
    eole's default, 2, on a GPU). ``extra``: further ``training`` options, overriding these."""
    if workers is None:
        workers = 0 if device == "cpu" else 2
    assert arch["enc_layers"] == arch["dec_layers"], (
        "eole's transformer config takes one layer count"
    )
    return {
        "save_data": str(out / "data"),
        "src_vocab": str(vocab),
        "share_vocab": True,
        "vocab_size_multiple": 1,
        "src_vocab_size": 1_000_000,
        "overwrite": True,
        "seed": seed,
        "report_every": report_every,
        "data": {"corpus_1": {"path_src": str(src), "path_tgt": str(tgt), "transforms": []}},
        "training": {
            "model_path": str(out / "model"),
            "train_steps": steps,
            "valid_steps": 10 * steps,
            "save_checkpoint_steps": 10 * steps,
            "world_size": 1,
            "gpu_ranks": [] if device == "cpu" else [0],
            # A bucket of one pass over the corpus (eole's default, 262,144 examples, cycles a small
            # corpus until full): sorted, batched and shuffled per epoch, as wordorder does. Each
            # data-loader worker reads every workers-th example into a bucket of its own.
            "bucket_size": -(-pairs // max(workers, 1)),
            "batch_type": "tokens",
            "batch_size": batch_tokens,
            "batch_size_multiple": 1,
            "accum_count": [1],
            "normalization": "tokens",
            "num_workers": workers,
            "compute_dtype": "bf16" if amp else "fp32",
            "use_amp": True,  # only acts with a 16-bit compute_dtype
            "optim": "adam",
            "adam_beta1": arch["betas"][0],
            "adam_beta2": arch["betas"][1],
            "adam_eps": arch["eps"],
            "learning_rate": arch["noam_factor"],
            "decay_method": "noam",
            "warmup_steps": arch["warmup"],
            "max_grad_norm": 0.0,
            "label_smoothing": arch["label_smoothing"],
            "dropout": [arch["dropout"]],
            "attention_dropout": [arch["attention_dropout"]],
            "param_init_method": "xavier_uniform",
            **({"train_from": str(train_from), "reset_optim": "none"} if train_from else {}),
            **(extra or {}),
        },
        "model": {
            "architecture": "transformer",
            "hidden_size": arch["d"],
            "transformer_ff": arch["ff"],
            "heads": arch["heads"],
            "layers": arch["enc_layers"],  # eole's transformer: one count for both
            "share_embeddings": True,
            "share_decoder_embeddings": True,
            "generator_bias": False,
            "add_qkvbias": True,
            "add_final_linear_bias": True,
            "add_ffnbias": True,
            "mlp_activation_fn": "relu",
            "embeddings": {
                "word_vec_size": arch["d"],
                "position_encoding_type": "SinusoidalInterleaved",
            },
        },
    }
