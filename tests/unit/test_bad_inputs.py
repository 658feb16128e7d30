"""Bad input, through the real ``wordorder`` command line: each case gives one ``error:`` line
naming the file (and line, where there is one), exit status 2, and leaves no output behind.

With ``WORDORDER_BAD_INPUT_TABLE=FILE`` set, each case appends its row (input | message) to FILE."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import subprocess
import tarfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from wordorder.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A local HTTP server (127.0.0.1) serving a folder of test archives."""
    root = tmp_path_factory.mktemp("site")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def run(argv, capsys) -> tuple[int, list[str]]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith("error:")]


def fetch_args(tmp_path, spec, lang="en"):
    return ["fetch", "--spec", json.dumps(spec), "--pair", "en-de", "--lang", lang,
            "--cache", tmp_path / "cache", "--output", tmp_path / "out" / f"x.{lang}"]


def local(tmp_path, en: bytes, de: bytes) -> dict:
    (tmp_path / "c.en").write_bytes(en)
    (tmp_path / "c.de").write_bytes(de)
    return {"kind": "local", "src": str(tmp_path / "c.en"), "tgt": str(tmp_path / "c.de")}


def left_over(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def check(name: str, code: int, errors: list[str], *must: str) -> None:
    assert code == 2, (name, code, errors)
    assert len(errors) == 1, (name, errors)
    for text in must:
        assert text in errors[0], (name, text, errors[0])
    table = os.environ.get("WORDORDER_BAD_INPUT_TABLE")
    if table:
        with open(table, "a", encoding="utf-8") as f:
            f.write(f"| {name} | {errors[0][len('error: '):].replace('|', '/')} |\n")


@pytest.mark.parametrize("case, en, de, must", [
    ("mismatched line counts", b"a b\nc d\ne f\n", b"x y\nz w\n", ["line counts differ", "c.en has 3 lines", "c.de has 2"]),
    ("invalid UTF-8", b"a b\n\xff\xfe c\n", b"x\ny\n", ["c.en:2:", "invalid UTF-8"]),
    ("control characters", b"a b\nc \x07 d\n", b"x\ny\n", ["c.en:2:", "control character U+0007"]),
    ("overlong line", b"a\n" + b"w " * 15_000 + b"\n", b"x\ny\n", ["c.en:2:", "30,000 characters"]),
])
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
    data = {"train": {"kind": "local"}, "dev": {"kind": "local"}, "test": {"news": {"kind": "local"}}}
    (tok / "dev.en").write_text("a\n", encoding="utf-8")
    (tok / "dev.de").write_text("x\n", encoding="utf-8")
    code, errors = run(["split", "--pair", "en-de", "--data", json.dumps(data), "--clean", "{}", "--seed", "1",
                        "--tok-dir", tok, "--output", tmp_path / "out" / "splits.json"], capsys)
    check("empty line in a dev/test set", code, errors, "raw/news.de:2:", "empty line in the 'news' set")
    assert left_over(tmp_path / "out") == []


@pytest.mark.parametrize("case, change, must", [
    ("unknown config key", {"trian": {}}, ["trian"]),
    ("bad config value", {"clean": {"max_len": -3}}, ["max_len"]),
    ("unknown variant", {"variants": ["transformer_smal"]}, ["unknown variant 'transformer_smal'"]),
])
def test_config(case, change, must, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    config = yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))
    config.update(change)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    code, errors = run(["check-config", "--config", path], capsys)
    check(case, code, errors, *must)


def test_out_of_range_alignment(tmp_path, capsys):
    (tmp_path / "t.tok").write_text("a b c\nd e\n", encoding="utf-8")
    (tmp_path / "t.align").write_text("0-0 1-1 2-2\n0-0 4-1\n", encoding="utf-8")
    code, errors = run(["preorder-gold", "--align", tmp_path / "t.align", "--tok", tmp_path / "t.tok",
                        "--output", tmp_path / "out" / "t.perm"], capsys)
    check("out-of-range alignment", code, errors, "t.align:2")
    assert left_over(tmp_path / "out") == []


def test_parser_failure(tmp_path, capsys):
    (tmp_path / "t.tok").write_text("a b\n", encoding="utf-8")
    parsers = {"en": {"backend": "spacy", "model": "en_no_such_model"}}
    code, errors = run(["parse", "--lang", "en", "--input", tmp_path / "t.tok", "--parsers", json.dumps(parsers),
                        "--output", tmp_path / "out" / "t.conllu"], capsys)
    check("parser not available", code, errors, "en_no_such_model")
    assert left_over(tmp_path / "out") == []


def test_corrupt_checkpoint(tmp_path, capsys):
    (tmp_path / "best.pt").write_bytes(b"PK\x03\x04 truncated")
    (tmp_path / "src.bpe").write_text("\u2581a\n", encoding="utf-8")
    code, errors = run(["translate", "--checkpoint", tmp_path / "best.pt", "--spm", tmp_path / "spm.model",
                        "--input", tmp_path / "src.bpe", "--lang", "de", "--output", tmp_path / "out" / "h",
                        "--output-tok", tmp_path / "out" / "h.tok"], capsys)
    check("corrupt checkpoint", code, errors, "best.pt", "cannot read the checkpoint")
    assert left_over(tmp_path / "out") == []


def test_subword_model_of_another_vocabulary(tmp_path, capsys):
    """A checkpoint with a vocabulary per side, decoded with a subword model of another size
    (e.g. the joint model, or the sides swapped): refused before decoding."""
    from wordorder.models import build_model
    from wordorder.text.subword import train_sentencepiece
    from wordorder.train.checkpoint import save_checkpoint

    (tmp_path / "text").write_text("".join(f"a{i} b{i % 7} c{i % 3}\n" for i in range(200)), encoding="utf-8")
    spm = train_sentencepiece([tmp_path / "text"], tmp_path / "spm", vocab_size=300)
    model = build_model({"preset": "tiny", "tie_embeddings": False}, 30, 50)
    save_checkpoint(tmp_path / "best.pt", model, model.options.to_dict(), {})
    (tmp_path / "src.bpe").write_text("\u2581a1\n", encoding="utf-8")
    code, errors = run(["translate", "--checkpoint", tmp_path / "best.pt", "--spm", spm, "--spm-tgt", spm,
                        "--input", tmp_path / "src.bpe", "--lang", "de", "--output", tmp_path / "out" / "h",
                        "--output-tok", tmp_path / "out" / "h.tok"], capsys)
    check("subword models of another vocabulary", code, errors, "best.pt",
          "vocabularies have 30 (source) and 50 (target) entries")
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
    spec = {"kind": "url", "url": f"{url}/corpus.tgz", "sha256": "0" * 64, "src": "c.en", "tgt": "c.de"}
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check("checksum mismatch", code, errors, "sha256")
    assert left_over(tmp_path / "out") == []


def test_archive_path_traversal(site, tmp_path, capsys):
    root, url = site
    data = _tar({"c.en": b"a\n", "c.de": b"x\n", "../../evil.sh": b"rm -rf /\n"})
    (root / "evil.tgz").write_bytes(data)
    spec = {"kind": "url", "url": f"{url}/evil.tgz", "sha256": hashlib.sha256(data).hexdigest(),
            "src": "c.en", "tgt": "c.de"}
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check("archive path traversal", code, errors, "../../evil.sh")
    assert left_over(tmp_path / "out") == [] and not (tmp_path / "evil.sh").exists()


def test_missing_licensed_corpus(tmp_path, capsys):
    spec = {"kind": "manual", "name": "ASPEC", "src": str(tmp_path / "aspec.{src}"), "tgt": str(tmp_path / "aspec.{tgt}"),
            "instructions": "request it at https://jipsti.jst.go.jp/aspec/ and place train.{src}/{tgt} here"}
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check("missing licensed corpus", code, errors, "ASPEC")
    assert left_over(tmp_path / "out") == []


def test_disk_full(tmp_path, capsys):
    """A 64 KiB tmpfs as the output disk (needs root to mount; skipped otherwise)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        line = b"a b c d e f g h\n"
        spec = local(tmp_path, line * 20_000, line * 20_000)  # 320 KB a side
        argv = ["fetch", "--spec", json.dumps(spec), "--pair", "en-de", "--lang", "en",
                "--cache", tmp_path / "cache", "--output", disk / "raw" / "x.en"]
        code, errors = run(argv, capsys)
        check("disk full", code, errors, "the disk is full")
        assert left_over(disk) == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)

