"""Corpus inputs that filled a disk, its inodes, or leaked test sentences into training (issue
37, cases 2, 6, 7, 8), through the real ``wordorder`` command line (``fetch``, ``split``)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tarfile
import unicodedata
from pathlib import Path

import pytest
from cli_checks import check, fetch_args, left_over, run, serve, small_disk

from wordorder.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    yield from serve(tmp_path_factory.mktemp("site"))


def test_unicode_equivalent_test_sentences_leave_training(tmp_path, capsys):
    """Case 2: NFD copies of test pairs in the training corpus are the same sentences (NFC);
    whitespace does not count, case does."""
    tok = tmp_path / "tok"
    tok.mkdir()
    cafe = "le café est fermé"
    nfd = unicodedata.normalize("NFD", cafe)
    assert nfd != cafe
    train_en = [cafe, "a b", nfd, f" {nfd}  ", "c d", "Le café est fermé"]
    train_de = ["x", "y", "das Café ist zu", "w", "v", "u"]
    for name, en, de in (
        ("train", train_en, train_de),
        ("dev", ["a b"], ["p"]),
        ("news", [cafe], [unicodedata.normalize("NFD", "das Café ist zu")]),
    ):
        (tok / f"{name}.en").write_text("\n".join(en) + "\n", encoding="utf-8")
        (tok / f"{name}.de").write_text("\n".join(de) + "\n", encoding="utf-8")
    data = {
        "train": {"kind": "local"},
        "dev": {"kind": "local"},
        "test": {"news": {"kind": "local"}},
    }
    out = tmp_path / "out" / "splits.json"
    argv = ["split", "--pair", "en-de", "--data", json.dumps(data), "--clean", "{}"]
    argv += ["--seed", "1", "--tok-dir", str(tok), "--output", str(out)]
    assert main(argv) == 0
    table = json.loads(out.read_text(encoding="utf-8"))
    # the NFC copy, the NFD copy (its target an NFC copy of the test target) and the spaced one
    assert table["overlap"] == {"pair": 1, "source": 3, "target": 0, "removed": 4}
    assert table["splits"]["train"]["lines"] == [4, 5]  # "c d", and the capitalised sentence
    rows = os.environ.get("WORDORDER_BAD_INPUT_TABLE")
    if rows:
        with open(rows, "a", encoding="utf-8") as f:
            f.write("| NFD copies of dev/test sentences in training | removed (NFC) |\n")


def test_endless_download_with_the_default_cap_on_a_small_disk(tmp_path, capsys):
    """Case 6: file:///dev/zero of unknown length under the default 64 GiB cap, into a download
    cache on a 1 MiB disk: refused before a byte is written, naming the URL and the cap."""
    disk = small_disk(tmp_path, "1m")
    try:
        (tmp_path / "c.de").write_bytes(b"x\n")
        spec = {
            "kind": "url",
            "src": {"url": "file:///dev/zero", "sha256": "0" * 64},
            "tgt": {"url": (tmp_path / "c.de").as_uri(), "sha256": _sha(b"x\n")},
        }
        args = fetch_args(tmp_path, spec)
        args[args.index("--cache") + 1] = disk / "cache"
        code, errors = run(args, capsys)
        check(
            "endless download (file:///dev/zero) under the default cap, on a disk with less free "
            "space",
            code,
            errors,
            "downloading file:///dev/zero (its length unknown, up to max_download_bytes) needs "
            "64.0 GiB but only",
        )
        assert [p.name for p in (disk / "cache").rglob("*.part")] == []
        assert left_over(tmp_path / "out") == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_download_that_cannot_be_written_is_removed(tmp_path):
    """Case 6: the disk fills while downloading (here: the process may write files of 1 MiB at
    most, RLIMIT_FSIZE): the error names the URL and the part is deleted, not left filling it."""
    (tmp_path / "c.de").write_bytes(b"x\n")
    spec = {
        "kind": "url",
        "max_download_bytes": "8M",
        "src": {"url": "file:///dev/zero", "sha256": "0" * 64},
        "tgt": {"url": (tmp_path / "c.de").as_uri(), "sha256": _sha(b"x\n")},
    }

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    done = subprocess.run(
        [sys.executable, "-m", "wordorder.cli", *map(str, fetch_args(tmp_path, spec))],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    check(
        "download that cannot be written (disk full, file too large)",
        done.returncode,
        errors,
        "cannot write the download of file:///dev/zero",
        "the partial download was deleted",
    )
    assert [p.name for p in (tmp_path / "cache").rglob("*.part")] == []


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_gz_side_is_capped_like_an_archive(site, tmp_path, capsys):
    """Case 7: a 50 KB plain .gz side that unpacks to 5 MB, with max_unpacked_bytes: 1M."""
    root, url = site
    en = gzip.compress(b"a b c d\n" * 640_000, compresslevel=9)
    (root / "big.en.gz").write_bytes(en)
    (root / "big.de").write_bytes(b"x\n" * 640_000)
    spec = {
        "kind": "url",
        "max_unpacked_bytes": "1M",
        "src": {"url": f"{url}/big.en.gz", "sha256": _sha(en)},
        "tgt": {"url": f"{url}/big.de", "sha256": _sha(b"x\n" * 640_000)},
    }
    code, errors = run(fetch_args(tmp_path, spec), capsys)
    check(
        ".gz file unpacking past max_unpacked_bytes",
        code,
        errors,
        "big.en.gz",
        "the compressed file unpacks to more than max_unpacked_bytes (1.0 MiB)",
    )
    assert left_over(tmp_path / "out") == []


def test_an_archive_of_many_members_is_refused(site, tmp_path, capsys):
    """Case 8: a tgz of 20,000 empty members (and the corpus): refused before unpacking."""
    root, url = site
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("c.en", b"a\n"), ("c.de", b"x\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for i in range(20_000):
            tar.addfile(tarfile.TarInfo(f"e/{i}"))
    data = buf.getvalue()
    (root / "many.tgz").write_bytes(data)
    spec = {"kind": "url", "url": f"{url}/many.tgz", "sha256": _sha(data), "src": "c.en"}
    code, errors = run(fetch_args(tmp_path, {**spec, "tgt": "c.de"}), capsys)
    check(
        "archive of 20,000 empty members (inodes)",
        code,
        errors,
        "many.tgz",
        "more than 10,000 files, folders and links: nothing was unpacked",
    )
    cache = tmp_path / "cache"
    assert sum(1 for _ in cache.rglob("*")) < 10 and left_over(tmp_path / "out") == []


def test_decomposed_copies_leave_training_after_the_real_tokenizer(tmp_path, capsys):
    """Issue 49, case 3: the tokenizer splits a decomposed mark off its letter (``nai ̈ ve
    cafe ́``), so NFD copies of test pairs compared unequal after NFC and stayed in training
    (3 of 3 kept). Through the tokenize and split steps, as the pipeline runs them."""
    test_en = ["a naïve café owner", "the déjà vu of Zoë"]
    test_de = ["ein naiver Café-Besitzer", "das Déjà-vu von Zoë"]
    nfd = [unicodedata.normalize("NFD", line) for line in test_en + test_de]
    train_en = ["one two", *nfd[:2], "three four", nfd[0]]
    train_de = ["eins zwei", "x", nfd[3], "drei vier", nfd[2]]
    raw, tok = tmp_path / "raw", tmp_path / "tok"
    raw.mkdir()
    for name, en, de in (("train", train_en, train_de), ("news", test_en, test_de)):
        for lang, lines in (("en", en), ("de", de)):
            (raw / f"{name}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
            argv = ["tokenize", "--lang", lang, "--input", raw / f"{name}.{lang}"]
            assert main([str(a) for a in argv + ["--output", tok / f"{name}.{lang}"]]) == 0
    assert "nai ̈ ve" in (tok / "train.en").read_text(encoding="utf-8")  # what made it miss
    data = {"train": {"kind": "local"}, "dev": {"holdout": 1}, "test": {"news": {"kind": "local"}}}
    out = tmp_path / "splits.json"
    argv = ["split", "--pair", "en-de", "--data", json.dumps(data), "--clean", "{}"]
    argv += ["--seed", "1", "--tok-dir", str(tok), "--output", str(out)]
    assert main(argv) == 0
    table = json.loads(out.read_text(encoding="utf-8"))
    assert table["overlap"] == {"pair": 2, "source": 1, "target": 0, "removed": 3}
    kept = table["splits"]["train"]["lines"] + table["splits"]["dev"]["lines"]
    assert sorted(kept) == [0, 3]
