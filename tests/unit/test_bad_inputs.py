"""Bad input, through the real ``wordorder`` command line: each case gives one ``error:`` line
naming the file (and line, where there is one), exit status 2, and leaves no output behind.

With ``WORDORDER_BAD_INPUT_TABLE=FILE`` set, each case appends its row (input | message) to FILE."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml
from cli_checks import check, fetch_args, left_over, run, serve, small_disk

from wordorder.cli import main
from wordorder.errors import WordorderError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    yield from serve(tmp_path_factory.mktemp("site"))


def local(tmp_path, en: bytes, de: bytes) -> dict:
    (tmp_path / "c.en").write_bytes(en)
    (tmp_path / "c.de").write_bytes(de)
    return {"kind": "local", "src": str(tmp_path / "c.en"), "tgt": str(tmp_path / "c.de")}


@pytest.mark.parametrize(
    "case, en, de, must",
    [
        (
            "mismatched line counts",
            b"a b\nc d\ne f\n",
            b"x y\nz w\n",
            ["line counts differ", "c.en has 3 lines", "c.de has 2"],
        ),
        ("invalid UTF-8", b"a b\n\xff\xfe c\n", b"x\ny\n", ["c.en:2:", "invalid UTF-8"]),
        (
            "control characters",
            b"a b\nc \x07 d\n",
            b"x\ny\n",
            ["c.en:2:", "control character U+0007"],
        ),
        (
            "overlong line",
            b"a\n" + b"w " * 15_000 + b"\n",
            b"x\ny\n",
            ["c.en:2:", "30,000 characters"],
        ),
    ],
)
def test_corpus_files(case, en, de, must, tmp_path, capsys):
    code, errors = run(fetch_args(tmp_path, local(tmp_path, en, de)), capsys)
    check(case, code, errors, *must)
    assert left_over(tmp_path / "out") == []


def test_missing_file(tmp_path, capsys):
    spec = {"kind": "local", "src": str(tmp_path / "nope.en"), "tgt": str(tmp_path / "nope.de")}
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check("missing file", code, errors, "nope.en", "file not found")
    assert left_over(tmp_path / "out") == []


def test_empty_line_in_a_test_set(tmp_path, capsys):
    tok = tmp_path / "tok"
    tok.mkdir()
    for name, en, de in (("train", "a b\nc d\n", "x y\nz w\n"), ("news", "a b\nc\n", "x y\n\n")):
        (tok / f"{name}.en").write_text(en, encoding="utf-8")
        (tok / f"{name}.de").write_text(de, encoding="utf-8")
    data = {
        "train": {"kind": "local"},
        "dev": {"kind": "local"},
        "test": {"news": {"kind": "local"}},
    }
    (tok / "dev.en").write_text("a\n", encoding="utf-8")
    (tok / "dev.de").write_text("x\n", encoding="utf-8")
    code, errors = run(
        [
            "split",
            "--pair",
            "en-de",
            "--data",
            json.dumps(data),
            "--clean",
            "{}",
            "--seed",
            "1",
            "--tok-dir",
            tok,
            "--output",
            tmp_path / "out" / "splits.json",
        ],
        capsys,
    )
    check(
        "empty line in a dev/test set",
        code,
        errors,
        "raw/news.de:2:",
        "empty line in the 'news' set",
    )
    assert left_over(tmp_path / "out") == []


@pytest.mark.parametrize(
    "case, change, must",
    [
        ("unknown config key", {"trian": {}}, ["trian"]),
        ("bad config value", {"clean": {"max_len": -3}}, ["max_len"]),
        (
            "unknown variant",
            {"variants": ["transformer_smal"]},
            ["unknown variant 'transformer_smal'"],
        ),
    ],
)
def test_config(case, change, must, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    config = yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))
    config.update(change)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    code, errors = run(["check-config", "--config", path], capsys)
    check(case, code, errors, *must)


def _registry_with_a_repeat(tmp_path) -> str:
    text = (REPO / "configs" / "variants.yaml").read_text(encoding="utf-8")
    text += "  transformer_small:\n    model: {family: transformer, preset: tiny}\n"
    (tmp_path / "variants.yaml").write_text(text, encoding="utf-8")
    return f"variants_file: {tmp_path / 'variants.yaml'}\n"


# Configs that YAML or the schema would accept, wrongly: each is refused with
# its file, line and key.
@pytest.mark.parametrize(
    "case, edit, where, must",
    [
        (
            "test set defined twice",
            lambda t, d: t.replace(
                "      bible: {holdout: 1000}\n",
                "      bible: {holdout: 1000}\n      bible: {holdout: 50}\n",
            ),
            "config.yaml:15",
            ["duplicate key 'bible' in data.en-ja.test (first at line 14)"],
        ),
        (
            "two clean: blocks",
            lambda t, d: t + "clean: {max_len: 80}\n",
            "config.yaml:{last}",
            ["duplicate key 'clean' in the top level"],
        ),
        (
            "seeds: [1, 1]",
            lambda t, d: t.replace("seeds: [1]", "seeds: [1, 1]"),
            "config.yaml:7",
            ["seeds: 1 is listed twice"],
        ),
        (
            "variant listed twice",
            lambda t, d: t.replace(
                "variants: [transformer_small]", "variants: [transformer_small, transformer_small]"
            ),
            "config.yaml:6",
            ["variants: 'transformer_small' is listed twice"],
        ),
        (
            "variant not in the registry",
            lambda t, d: t.replace(
                "variants: [transformer_small]", "variants: [transformer_small, transformer_smal]"
            ),
            "config.yaml:6",
            ["unknown variant 'transformer_smal'", "not in the registry configs/variants.yaml"],
        ),
        (
            "variant defined twice in the registry",
            lambda t, d: t + _registry_with_a_repeat(d),
            "variants.yaml:{last_reg}",
            ["duplicate key 'transformer_small' in variants (first at line 12)"],
        ),
    ],
)
def test_config_text(case, edit, where, must, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    text = edit((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"), tmp_path)
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    last_reg = (
        len((tmp_path / "variants.yaml").read_text(encoding="utf-8").splitlines()) - 1
        if (tmp_path / "variants.yaml").exists()
        else 0
    )
    where = where.format(last=len(text.splitlines()), last_reg=last_reg)
    code, errors = run(["check-config", "--config", path], capsys)
    check(case, code, errors, f"{tmp_path / where}: ", *must)


def _test_set(config, name):
    config["data"]["en-ja"]["test"] = {name: {"holdout": 1000}}


def _registry_entry(tmp_path, name):
    """A registry with one more entry, ``name``, and a config pointing at it."""
    registry = yaml.safe_load((REPO / "configs" / "variants.yaml").read_text(encoding="utf-8"))
    registry["variants"][name] = registry["variants"]["transformer_small"]
    path = tmp_path / "variants.yaml"
    path.write_text(yaml.safe_dump(registry), encoding="utf-8")
    return {"variants_file": str(path)}


# Names become folders, file names and wildcards; paths go into every shell command (quoted).
# Each is refused at config validation, naming the key and the rule, before any job.
@pytest.mark.parametrize(
    "case, change, must",
    [
        (
            "experiment named '..' (outputs in the repository)",
            lambda c, t: c.update(experiment=".."),
            ["'experiment'", "'..' is refused", "not '.' or '..'"],
        ),
        (
            "experiment named '-h'",
            lambda c, t: c.update(experiment="-h"),
            ["'experiment'", "not starting with '-'"],
        ),
        (
            "name ending in a newline (splits every shell command)",
            lambda c, t: c.update(experiment="demo\n"),
            ["'experiment'", "'demo\\n' is refused"],
        ),
        (
            "variant named '..' in the config",
            lambda c, t: c.update(variants=[".."]),
            ["'variants.0'", "'..' is refused"],
        ),
        (
            "variant named '-h' in the registry",
            lambda c, t: c.update(_registry_entry(t, "-h")),
            ["variants.yaml", "the key '-h' is refused", "not starting with '-'"],
        ),
        (
            "variant named '..' in the registry",
            lambda c, t: c.update(_registry_entry(t, "..")),
            ["variants.yaml", "the key '..' is refused"],
        ),
        (
            "test set named '..'",
            lambda c, t: _test_set(c, ".."),
            ["'data.en-ja.test'", "the key '..' is refused"],
        ),
        (
            "test set name ending in a newline",
            lambda c, t: _test_set(c, "bible\n"),
            ["'data.en-ja.test'", "'bible\\n'"],
        ),
        (
            "pair name ending in a newline",
            lambda c, t: c.update(pairs=["en-ja\n"]),
            ["'pairs.0'", "'en-ja\\n' is refused"],
        ),
        (
            "empty results folder (outputs under /)",
            lambda c, t: c.update(results=""),
            ["'results'", "not empty"],
        ),
        (
            "newline in a path (logs)",
            lambda c, t: c.update(logs="logs\nx"),
            ["'logs'", "control characters"],
        ),
        (
            "braces in results (read as wildcards)",
            lambda c, t: c.update(results="r{pair}"),
            ["'results'", "braces"],
        ),
        (
            "newline in align_gold.links",
            lambda c, t: c["data"]["en-ja"].update(align_gold={"pairs": "p", "links": "l\n"}),
            ["'data.en-ja.align_gold.links'", "control characters"],
        ),
        (
            "device that is not a torch device",
            lambda c, t: c["train"].update(device="cpu$(touch x)"),
            ["'train.device'", "a torch device"],
        ),
        (
            "newline in a test set's extra reference",
            lambda c, t: c["data"]["en-ja"]["test"].update(
                nist={"kind": "local", "src": "a.{src}", "tgt": "a.{tgt}", "extra_refs": ["r1\n"]}
            ),
            ["data.en-ja.test.nist", "'extra_refs'", "control character U+000A"],
        ),
        (
            "newline in a corpus path",
            lambda c, t: c["data"]["en-ja"].update(
                train={"kind": "local", "src": "a\n", "tgt": "b"}
            ),
            ["data.en-ja.train", "'src'", "control character U+000A"],
        ),
    ],
)
def test_refused_names_and_paths(case, change, must, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    config = yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))
    change(config, tmp_path)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    code, errors = run(["check-config", "--config", path], capsys)
    check(case, code, errors, *must)


def test_out_of_range_alignment(tmp_path, capsys):
    (tmp_path / "t.tok").write_text("a b c\nd e\n", encoding="utf-8")
    (tmp_path / "t.align").write_text("0-0 1-1 2-2\n0-0 4-1\n", encoding="utf-8")
    code, errors = run(
        [
            "preorder-gold",
            "--align",
            tmp_path / "t.align",
            "--tok",
            tmp_path / "t.tok",
            "--output",
            tmp_path / "out" / "t.perm",
        ],
        capsys,
    )
    check("out-of-range alignment", code, errors, "t.align:2")
    assert left_over(tmp_path / "out") == []


def test_parser_failure(tmp_path, capsys):
    (tmp_path / "t.tok").write_text("a b\n", encoding="utf-8")
    parsers = {"en": {"backend": "spacy", "model": "en_no_such_model"}}
    code, errors = run(
        [
            "parse",
            "--lang",
            "en",
            "--input",
            tmp_path / "t.tok",
            "--parsers",
            json.dumps(parsers),
            "--output",
            tmp_path / "out" / "t.conllu",
        ],
        capsys,
    )
    check("parser not available", code, errors, "en_no_such_model")
    assert left_over(tmp_path / "out") == []


def test_corrupt_checkpoint(tmp_path, capsys):
    (tmp_path / "best.pt").write_bytes(b"PK\x03\x04 truncated")
    (tmp_path / "src.bpe").write_text("\u2581a\n", encoding="utf-8")
    code, errors = run(
        [
            "translate",
            "--checkpoint",
            tmp_path / "best.pt",
            "--spm",
            tmp_path / "spm.model",
            "--input",
            tmp_path / "src.bpe",
            "--lang",
            "de",
            "--output",
            tmp_path / "out" / "h",
            "--output-tok",
            tmp_path / "out" / "h.tok",
        ],
        capsys,
    )
    check("corrupt checkpoint", code, errors, "best.pt", "cannot read the checkpoint")
    assert left_over(tmp_path / "out") == []


def _spm_and_checkpoint(tmp_path: Path, model_options: dict, *vocab: int) -> Path:
    """A 300-piece subword model (returned) and ``best.pt`` of an untrained model with ``vocab``."""
    from wordorder.model_io.checkpoint import save_checkpoint
    from wordorder.models import build_model
    from wordorder.text.subword_train import train_sentencepiece

    (tmp_path / "text").write_text(
        "".join(f"a{i} b{i % 7} c{i % 3}\n" for i in range(200)), encoding="utf-8"
    )
    spm = train_sentencepiece([tmp_path / "text"], tmp_path / "spm", vocab_size=300)
    model = build_model(model_options, *vocab)
    save_checkpoint(tmp_path / "best.pt", model, model.options.to_dict(), {})
    return spm


def test_subword_model_of_another_vocabulary(tmp_path, capsys):
    """A checkpoint with a vocabulary per side, decoded with a subword model of another size
    (e.g. the joint model, or the sides swapped): refused before decoding."""
    spm = _spm_and_checkpoint(tmp_path, {"preset": "tiny", "tie_embeddings": False}, 30, 50)
    (tmp_path / "src.bpe").write_text("\u2581a1\n", encoding="utf-8")
    code, errors = run(
        [
            "translate",
            "--checkpoint",
            tmp_path / "best.pt",
            "--spm",
            spm,
            "--spm-tgt",
            spm,
            "--input",
            tmp_path / "src.bpe",
            "--lang",
            "de",
            "--output",
            tmp_path / "out" / "h",
            "--output-tok",
            tmp_path / "out" / "h.tok",
        ],
        capsys,
    )
    check(
        "subword models of another vocabulary",
        code,
        errors,
        "best.pt",
        "vocabularies have 30 (source) and 50 (target) entries",
    )
    assert left_over(tmp_path / "out") == []


def _tar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_checksum_mismatch(site, tmp_path, capsys):
    root, url = site
    (root / "corpus.tgz").write_bytes(_tar({"c.en": b"a\n", "c.de": b"x\n"}))
    spec = {
        "kind": "url",
        "url": f"{url}/corpus.tgz",
        "sha256": "0" * 64,
        "src": "c.en",
        "tgt": "c.de",
    }
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check("checksum mismatch", code, errors, "sha256")
    assert left_over(tmp_path / "out") == []


def test_archive_path_traversal(site, tmp_path, capsys):
    root, url = site
    data = _tar({"c.en": b"a\n", "c.de": b"x\n", "../../evil.sh": b"rm -rf /\n"})
    (root / "evil.tgz").write_bytes(data)
    spec = {
        "kind": "url",
        "url": f"{url}/evil.tgz",
        "sha256": hashlib.sha256(data).hexdigest(),
        "src": "c.en",
        "tgt": "c.de",
    }
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check("archive path traversal", code, errors, "../../evil.sh")
    assert left_over(tmp_path / "out") == [] and not (tmp_path / "evil.sh").exists()


def test_missing_licensed_corpus(tmp_path, capsys):
    spec = {
        "kind": "manual",
        "name": "ASPEC",
        "src": str(tmp_path / "aspec.{src}"),
        "tgt": str(tmp_path / "aspec.{tgt}"),
        "instructions": (
            "request it at https://jipsti.jst.go.jp/aspec/ and place train.{src}/{tgt} here"
        ),
    }
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check("missing licensed corpus", code, errors, "ASPEC")
    assert left_over(tmp_path / "out") == []


def test_disk_full(tmp_path, capsys):
    """A 64 KiB tmpfs as the output disk (needs root to mount; skipped otherwise)."""
    disk = small_disk(tmp_path, "64k")
    try:
        line = b"a b c d e f g h\n"
        spec = local(tmp_path, line * 20_000, line * 20_000)  # 320 KB a side
        argv = [
            "fetch",
            "--spec",
            json.dumps(spec),
            "--pair",
            "en-de",
            "--lang",
            "en",
            "--cache",
            tmp_path / "cache",
            "--output",
            disk / "raw" / "x.en",
        ]
        code, errors = run(argv, capsys)
        check("disk full", code, errors, "the disk is full")
        assert left_over(disk) == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_disk_full_while_saving_a_checkpoint(tmp_path, capsys):
    """torch's zip writer reports a full disk as ``RuntimeError: ... unexpected pos``: every torch
    file goes through io.save_torch, which makes it one error naming the file (a 1 MiB tmpfs)."""
    import torch

    from wordorder.model_io.checkpoint import save_checkpoint
    from wordorder.models import build_model

    disk = small_disk(tmp_path, "1m")
    try:
        model = build_model({"preset": "tiny"}, 8000)  # ≈ 2 MB of weights
        save_checkpoint(tmp_path / "a.pt", model, model.options.to_dict(), {})
        code, errors = run(
            ["average-checkpoints", "--inputs", tmp_path / "a.pt", "--output", disk / "avg.pt"],
            capsys,
        )
        check(
            "disk full while saving a checkpoint",
            code,
            errors,
            "the disk is full",
            str(disk / "avg.pt"),
        )
        # what torch said, for the record
        assert "unexpected pos" in errors[0] or "write failed" in errors[0]
        assert left_over(disk) == []
        from wordorder.train.options import TrainOptions
        from wordorder.train.resume import Progress, save_state
        from wordorder.train.schedule import inverse_sqrt_scheduler
        from wordorder.train.update import make_optimizer

        opt = make_optimizer(model, TrainOptions())
        with pytest.raises(WordorderError, match="the disk is full"):
            save_state(
                disk / "state.pt",
                model,
                opt,
                inverse_sqrt_scheduler(opt, 10),
                torch.amp.GradScaler("cuda", enabled=False),
                Progress(),
                "key",
            )
        assert left_over(disk) == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


# --- hostile archives and downloads (issue 19: items 3 and 4) ---------------------------------


def _links_tar(entries: list[tuple[str, str, object]]) -> bytes:
    """A .tgz of ("file", name, bytes) / ("dir", name, None) / ("sym", name,
    target) entries, in order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for kind, name, value in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(value)
                tar.addfile(info, io.BytesIO(value))
                continue
            info.type = tarfile.DIRTYPE if kind == "dir" else tarfile.SYMTYPE
            info.linkname = value or ""
            tar.addfile(info)
    return buf.getvalue()


def _url_spec(root: Path, url: str, name: str, data: bytes, **more) -> dict:
    (root / name).write_bytes(data)
    return {
        "kind": "url",
        "url": f"{url}/{name}",
        "sha256": hashlib.sha256(data).hexdigest(),
        "src": "c.en",
        "tgt": "c.de",
        **more,
    }


def test_archive_chained_symlinks(site, tmp_path, capsys):
    root, url = site
    data = _links_tar(
        [
            ("file", "c.en", b"a\n"),
            ("file", "c.de", b"x\n"),
            ("dir", "d", None),
            ("sym", "d/l", ".."),
            ("sym", "e", "d/l/.."),
            ("file", "e/evil.sh", b"rm -rf /\n"),
        ]
    )
    code, errors = run(fetch_args(tmp_path, _url_spec(root, url, "chain.tgz", data)), capsys)
    check(
        "archive with chained symlinks (d/l -> .., e -> d/l/..)",
        code,
        errors,
        "chain.tgz",
        "member 'e'",
        "outside the archive",
    )
    assert left_over(tmp_path / "out") == [] and not list(tmp_path.rglob("evil.sh"))


def _sparse_tgz(name: str, real_size: int, data: bytes) -> bytes:
    """A .tgz of one GNU sparse member: ``real_size`` bytes of holes and ``data`` (a tiny archive
    that unpacks to ``real_size`` bytes, as a decompression bomb does)."""
    info = tarfile.TarInfo(name)
    info.type, info.size = tarfile.GNUTYPE_SPARSE, len(data)
    header = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    header[386:398] = b"%011o\0" % (real_size - len(data))  # one data block, at the end
    header[398:410] = b"%011o\0" % len(data)
    header[483:495] = b"%011o\0" % real_size  # the real size
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    return gzip.compress(bytes(header) + data + b"\0" * (-len(data) % 512 + 1024))


def test_archive_bomb_default_cap(site, tmp_path, capsys):
    root, url = site
    data = _sparse_tgz("c.en", 2 << 30, b"a\n")  # 100 bytes that unpack to 2 GiB
    code, errors = run(fetch_args(tmp_path, _url_spec(root, url, "bomb.tgz", data)), capsys)
    check(
        "archive bomb (100 bytes unpacking to 2 GiB)",
        code,
        errors,
        "bomb.tgz",
        "unpacks to 2.0 GiB",
        "default limit of 200 times the archive's size",
    )
    assert left_over(tmp_path / "out") == []  # the cache keeps the download, nothing unpacked
    assert left_over(tmp_path / "cache") == [".bomb.tgz.verified", ".lock", "bomb.tgz"]


def test_archive_above_max_unpacked_bytes(site, tmp_path, capsys):
    root, url = site
    data = _links_tar([("file", "c.en", b"a b c\n" * 200_000), ("file", "c.de", b"x\n")])  # 1.2 MB
    spec = _url_spec(root, url, "big.tgz", data, max_unpacked_bytes="1M")
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check(
        "archive above max_unpacked_bytes",
        code,
        errors,
        "big.tgz",
        "unpacks to 1.1 MiB, more than max_unpacked_bytes (1.0 MiB)",
    )
    assert left_over(tmp_path / "cache").count("big.tgz") == 1 and not list(
        (tmp_path / "cache").rglob("c.en")
    )


def warm_up(tmp_path: Path, capsys) -> None:
    """Fail a fetch once on a small file: what the CLI imports on the way (torch) is then not
    counted in the memory or time a test measures."""
    warm = tmp_path / "warm"
    warm.mkdir()
    run(fetch_args(warm, local(warm, b"w" * 30_000 + b"\n", b"x\n")), capsys)


def test_download_of_dev_zero_stops_at_the_cap_at_once(tmp_path, capsys):
    warm_up(tmp_path, capsys)
    (tmp_path / "c.de").write_bytes(b"x\n")
    spec = {
        "kind": "url",
        "max_download_bytes": "4M",
        "src": {"url": "file:///dev/zero", "sha256": "0" * 64},
        "tgt": {"url": (tmp_path / "c.de").as_uri(), "sha256": hashlib.sha256(b"x\n").hexdigest()},
    }
    start = time.monotonic()
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check(
        "endless download (file:///dev/zero)",
        code,
        errors,
        "file:///dev/zero",
        "grew past max_download_bytes (4.0 MiB)",
    )
    # not retried as a network fault
    assert time.monotonic() - start < 5 and "tries" not in errors[0]
    assert left_over(tmp_path / "out") == [] and left_over(tmp_path / "cache") == [".lock"]


def test_download_announced_above_the_cap(site, tmp_path, capsys):
    root, url = site
    data = _links_tar([("file", "c.en", os.urandom(300_000)), ("file", "c.de", b"x\n")])
    code, errors = run(
        fetch_args(tmp_path, _url_spec(root, url, "large.tgz", data, max_download_bytes=100_000)),
        capsys,
    )
    check(
        "download larger than max_download_bytes",
        code,
        errors,
        f"announces {len(data):,} bytes",
        "large.tgz",
        "max_download_bytes (100,000 bytes); nothing was downloaded",
    )
    assert left_over(tmp_path / "cache") == [".lock"]


def test_overlong_line_is_refused_while_streaming(tmp_path, capsys):
    """A 50 MB line (50 kB compressed) is refused after reading ~80 kB of it, not read whole."""
    with gzip.open(tmp_path / "c.en.gz", "wb", compresslevel=1) as f:
        for _ in range(50):
            f.write(b"w" * 1_000_000)
    (tmp_path / "c.de").write_bytes(b"x\n")
    spec = {"kind": "local", "src": str(tmp_path / "c.en.gz"), "tgt": str(tmp_path / "c.de")}
    warm_up(tmp_path, capsys)
    tracemalloc.start()
    try:
        code, errors = run(fetch_args(tmp_path, spec), capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    check(
        "a compressed 50 MB single line", code, errors, "c.en.gz:1:", "more than 20,000 characters"
    )
    assert peak < 4_000_000, peak  # reading it whole would take 50 MB (and 3.3 GB for a 1 GiB line)
    assert left_over(tmp_path / "out") == []


# --- clear errors (issue 19: item 9) ----------------------------------------------------------

_LINES = "".join(f"sentence {i} of {i * 7919 % 10007}\n" for i in range(5000)).encode()


@pytest.mark.parametrize(
    "case, content, must",
    [
        (
            "truncated .gz",
            gzip.compress(_LINES)[:10_000],
            ["c.en.gz", "truncated: it ends after line "],
        ),
        (
            "plain text named .gz",
            b"a b\nc d\n",
            ["c.en.gz", "not gzip-compressed although its name ends in .gz"],
        ),
    ],
    ids=["truncated", "plain"],
)
def test_bad_gzip(case, content, must, tmp_path, capsys):
    (tmp_path / "c.en.gz").write_bytes(content)
    (tmp_path / "c.de").write_bytes(b"x\n" * 5000)
    spec = {"kind": "local", "src": str(tmp_path / "c.en.gz"), "tgt": str(tmp_path / "c.de")}
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check(case, code, errors, *must)
    assert left_over(tmp_path / "out") == []


def test_unwritable_download_cache(site, tmp_path, capsys):
    root, url = site
    cache = tmp_path / "cache"
    cache.mkdir()
    if os.geteuid() == 0:  # root writes anywhere: mount a read-only disk instead
        if (
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(cache)],
                capture_output=True,
            ).returncode
            != 0
        ):
            pytest.skip("cannot mount a read-only tmpfs here")
    else:
        cache.chmod(0o555)
    try:
        data = _links_tar([("file", "c.en", b"a\n"), ("file", "c.de", b"x\n")])
        code, errors = run(fetch_args(tmp_path, _url_spec(root, url, "ok.tgz", data)), capsys)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(cache)], check=False)
        cache.chmod(0o755)
    check("unwritable download cache", code, errors, "cannot write the download cache", str(cache))
    assert left_over(tmp_path / "out") == []


def test_empty_corpus_names_the_source_files_and_the_output(tmp_path, capsys):
    code, errors = run(fetch_args(tmp_path, local(tmp_path, b"", b"")), capsys)
    check(
        "empty corpus",
        code,
        errors,
        f"{tmp_path / 'c.en'} and {tmp_path / 'c.de'} gave no lines",
        str(tmp_path / "out" / "x.en"),
    )
    assert ".fetch" not in errors[0] and left_over(tmp_path / "out") == []


@pytest.mark.parametrize(
    "case, sides, must",
    [
        (
            "file:// source and target the same file",
            "same url",
            ["'src.url' and 'tgt.url'", "give the same file"],
        ),
        (
            "file:// source and target the same content",
            "same sha256",
            ["'src.sha256' and 'tgt.sha256' of the url source are equal"],
        ),
        (
            "local source and target the same file (a link)",
            "local link",
            ["'src' and 'tgt' of the local source are the same file"],
        ),
    ],
)
def test_source_and_target_the_same_file(case, sides, must, tmp_path, capsys):
    (tmp_path / "c.en").write_bytes(b"a b\n")
    (tmp_path / "copy.en").write_bytes(b"a b\n")
    (tmp_path / "c.de").symlink_to(tmp_path / "c.en")
    side = {"url": (tmp_path / "c.en").as_uri(), "sha256": hashlib.sha256(b"a b\n").hexdigest()}
    spec = {
        "same url": {"kind": "url", "src": side, "tgt": dict(side)},
        "same sha256": {
            "kind": "url",
            "src": side,
            "tgt": {**side, "url": (tmp_path / "copy.en").as_uri()},
        },
        "local link": {
            "kind": "local",
            "src": str(tmp_path / "c.en"),
            "tgt": str(tmp_path / "c.de"),
        },
    }[sides]
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check(case, code, errors, *must)
    assert left_over(tmp_path / "out") == []


# --- a killed fetch's temporaries (issue 19: item 10) -------------------------------------------

_OWN_A_TEMP = """
import os, sys, time
from pathlib import Path
from wordorder.temps import make_temp
path = make_temp(Path(sys.argv[1]), sys.argv[2], directory=sys.argv[3] == "dir")
(path / "part" if path.is_dir() else path).write_bytes(b"half a corpus" * 1000)
print(path, flush=True)
time.sleep(60)
"""


def _owned_temp(folder: Path, name: str, kind: str) -> tuple[subprocess.Popen, Path]:
    """A real process that makes a temporary for ``name`` in ``folder`` and waits (to be killed)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _OWN_A_TEMP, str(folder), name, kind],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    return proc, Path(proc.stdout.readline().strip())


def _killed_fetch(tmp_path: Path, out: Path) -> Path:
    """Start ``wordorder fetch`` of a 300,000-line corpus and SIGKILL it while it writes; its
    half-written temporary output stays behind."""
    line = b"a b c d e f g h i j\n"
    spec = local(tmp_path, line * 300_000, line * 300_000)
    argv = [sys.executable, "-m", "wordorder.cli", *map(str, fetch_args(tmp_path, spec))]
    proc = subprocess.Popen(
        argv,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not [p for p in out.glob(f".x.en.*~{proc.pid}.*.tmp") if p.stat().st_size]:
        assert proc.poll() is None and time.monotonic() < deadline, (
            "the fetch ended before it was killed"
        )
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (left,) = out.glob(f".x.en.*~{proc.pid}.*.tmp")
    return left


def test_a_killed_fetch_leaves_temporaries_that_the_next_run_removes(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    killed_dir, dead_dir = _owned_temp(out, "x.en", "dir")  # e.g. an archive being unpacked
    live, live_file = _owned_temp(out, "x.en", "file")  # another fetch of the same file, running
    # (made last: making a temporary removes the stale ones)
    dead_file = _killed_fetch(tmp_path, out)
    legacy = out / ".fetch.abcd1234"  # left by an older version killed a week ago
    legacy.mkdir()
    (legacy / "src").write_bytes(b"a\n")
    week_ago = time.time() - 7 * 86400
    for p in (legacy / "src", legacy):
        os.utime(p, (week_ago, week_ago))
    try:
        killed_dir.send_signal(signal.SIGKILL)
        killed_dir.wait()
        assert dead_file.stat().st_size > 0 and dead_dir.exists() and not (out / "x.en").exists()
        assert (
            main([str(a) for a in fetch_args(tmp_path, local(tmp_path, b"a b\n", b"x y\n"))]) == 0
        )
        assert not dead_file.exists() and not dead_dir.exists() and not legacy.exists()
        assert live_file.exists()  # another fetch, still running: kept
        assert sorted(p.name for p in out.iterdir()) == sorted([live_file.name, "x.en"])
    finally:
        live.kill()
        live.wait()
    table = os.environ.get("WORDORDER_BAD_INPUT_TABLE")
    if table:
        with open(table, "a", encoding="utf-8") as f:
            f.write(
                "| temporaries of a fetch killed with -9 | removed by the next run (a "
                "live fetch's are kept) |\n"
            )


def test_test_sentences_in_training(tmp_path, capsys):
    """Not an error, a wrong result made right: training loses the pairs that a dev/test set has."""
    tok = tmp_path / "tok"
    tok.mkdir()
    for name, en, de in (
        ("train", "a b\nc d\ne f\ng h\na  b\n", "x y\nz w\nu v\nq\nr\n"),
        ("dev", "c d\n", "p\n"),
        ("news", "a b\n", "x y\n"),
    ):
        (tok / f"{name}.en").write_text(en, encoding="utf-8")
        (tok / f"{name}.de").write_text(de, encoding="utf-8")
    data = {
        "train": {"kind": "local"},
        "dev": {"kind": "local"},
        "test": {"news": {"kind": "local"}},
    }
    code = main(
        [
            "split",
            "--pair",
            "en-de",
            "--data",
            json.dumps(data),
            "--clean",
            "{}",
            "--seed",
            "1",
            "--tok-dir",
            str(tok),
            "--output",
            str(tmp_path / "out" / "splits.json"),
        ]
    )
    assert code == 0 and '"removed": 3' in capsys.readouterr().out
    table = json.loads((tmp_path / "out" / "splits.json").read_text(encoding="utf-8"))
    assert table["overlap"] == {"pair": 1, "source": 2, "target": 0, "removed": 3}
    assert table["splits"]["train"]["lines"] == [2, 3]
    rows = os.environ.get("WORDORDER_BAD_INPUT_TABLE")
    if rows:
        with open(rows, "a", encoding="utf-8") as f:
            f.write(
                "| dev/test sentences in the training corpus | removed from training, "
                "counted in splits.json |\n"
            )


def test_head_similarity_of_no_sentences(tmp_path, capsys):
    """An empty test source for the head-similarity analysis: one error
    naming the file, no output."""
    spm = _spm_and_checkpoint(tmp_path, {"preset": "tiny"}, 300)
    (tmp_path / "src.bpe").write_text("", encoding="utf-8")
    argv = [
        "head-similarity",
        "--checkpoint",
        tmp_path / "best.pt",
        "--spm",
        spm,
        "--input",
        tmp_path / "src.bpe",
    ]
    argv += [
        "--output",
        tmp_path / "out" / "h.json",
        "--pair",
        "en-de",
        "--variant",
        "v",
        "--testset",
        "t",
    ]
    code, errors = run([*argv, "--seed", "1"], capsys)
    check("no sentences", code, errors, "src.bpe", "no sentences to measure")
    assert left_over(tmp_path / "out") == []


def test_malformed_named_path_names_its_option(tmp_path, capsys):
    """A METHOD=PATH item without '=' is refused naming the option it came from."""
    for name, text in (
        ("src.tok", "a b\n"),
        ("ref", "a b\n"),
        ("hyp", "a b\n"),
        ("al", "0-0 1-1\n"),
    ):
        (tmp_path / name).write_text(text, encoding="utf-8")
    base = ["length-analysis", "--src-tok", tmp_path / "src.tok", "--ref", tmp_path / "ref"]
    base += ["--lang", "en", "--title", "t", "--align", tmp_path / "al"]
    out = {k: tmp_path / f"out.{k}" for k in ("csv", "md", "png")}
    for k, path in out.items():
        base += [f"--{k}", path]
    code, errors = run([*base, "--hyps", f"sys={tmp_path / 'hyp'}", "--perms", "btg"], capsys)
    check("length-analysis --perms without '='", code, errors, "--perms takes METHOD=PATH")
    code, errors = run([*base, "--hyps", "sys"], capsys)
    check("length-analysis --hyps without '='", code, errors, "--hyps takes NAME=PATH")
    assert not any(path.exists() for path in out.values())
