"""The sacrebleu source: a small fake WMT-style test set served by a local HTTP server.

sacreBLEU's own code downloads, unpacks and converts it; the test only registers the fake
set in sacreBLEU's table and points its data folder at a temporary directory (no network).
"""

from __future__ import annotations

import functools
import hashlib
import io
import socket
import tarfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wordorder.corpus.sources import fetch_source
from wordorder.errors import WordorderError

sacrebleu_dataset = pytest.importorskip("sacrebleu.dataset")
NAME = "wordorder_fake"


def sgm(docs: list[tuple[str, list[str]]]) -> bytes:
    lines = ['<srcset setid="fake" srclang="any">']
    for n, (origlang, segs) in enumerate(docs):
        lines.append(f'<doc sysid="ref" docid="d{n}" genre="news" origlang="{origlang}">')
        lines += [f'<seg id="{i + 1}">{s}</seg>' for i, s in enumerate(segs)]
        lines.append("</doc>")
    lines.append("</srcset>")
    return ("\n".join(lines) + "\n").encode("utf-8")


SRC = [("en", ["Hello world.", "A  second   line."]), ("de", ["Translated from German."])]
REF = [("en", ["Hallo Welt.", "Eine zweite Zeile."]), ("de", ["Aus dem Deutschen übersetzt."])]


def tarball() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("fake/src.en.sgm", sgm(SRC)), ("fake/ref.de.sgm", sgm(REF))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(tmp_path):
    """A directory served over HTTP on 127.0.0.1; yields (base URL, directory)."""
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    httpd.shutdown()
    httpd.server_close()


def register(monkeypatch, tmp_path, url: str, md5: str | None):
    """Add a fake test set to sacreBLEU's table, keeping its data under tmp_path."""
    import sacrebleu.utils
    from sacrebleu.dataset.fake_sgml import FakeSGMLDataset

    home = tmp_path / "sacrebleu"
    dataset = FakeSGMLDataset(
        NAME,
        data=[url],
        md5=[md5] if md5 else None,
        langpairs={"en-de": ["fake/src.en.sgm", "fake/ref.de.sgm"]},
    )
    dataset._outdir = str(home / NAME)  # sacreBLEU fixes these from $SACREBLEU at import time
    dataset._rawdir = str(home / NAME / "raw")
    monkeypatch.setitem(sacrebleu_dataset.DATASETS, NAME, dataset)
    monkeypatch.setattr(sacrebleu.utils, "SACREBLEU_DIR", str(home))  # used by origlang filtering
    return home


def fetch(spec, tmp_path, src="en", tgt="de"):
    out_src, out_tgt = tmp_path / "out" / "src", tmp_path / "out" / "tgt"
    n = fetch_source(spec, src, tgt, out_src, out_tgt, tmp_path / "cache")
    return (
        n,
        out_src.read_text(encoding="utf-8").splitlines(),
        out_tgt.read_text(encoding="utf-8").splitlines(),
    )


def test_test_set_is_downloaded_by_sacrebleu_then_read_from_its_cache(
    served, tmp_path, monkeypatch
):
    base, root = served
    data = tarball()
    (root / "fake.tgz").write_bytes(data)
    register(monkeypatch, tmp_path, base + "/fake.tgz", hashlib.md5(data).hexdigest())
    spec = {"kind": "sacrebleu", "test_set": NAME, "langpair": "en-de"}
    # sacreBLEU's cleaning
    expected_src = ["Hello world.", "A second line.", "Translated from German."]
    expected_ref = ["Hallo Welt.", "Eine zweite Zeile.", "Aus dem Deutschen übersetzt."]
    assert fetch(spec, tmp_path) == (3, expected_src, expected_ref)
    (root / "fake.tgz").unlink()  # from now on only sacreBLEU's cache can answer
    assert fetch(spec, tmp_path, "de", "en") == (3, expected_ref, expected_src)
    assert fetch({**spec, "origlang": "de"}, tmp_path) == (1, expected_src[2:], expected_ref[2:])
    assert fetch({k: v for k, v in spec.items() if k != "langpair"}, tmp_path)[0] == 3


def test_offline_download_fails_fast_and_says_what_to_do(tmp_path, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}/fake.tgz"
    home = register(monkeypatch, tmp_path, url, None)
    start = time.monotonic()
    with pytest.raises(WordorderError) as e:
        fetch({"kind": "sacrebleu", "test_set": NAME, "langpair": "en-de"}, tmp_path)
    assert time.monotonic() - start < 15
    msg = str(e.value)
    assert msg.startswith(f"could not download sacrebleu test set {NAME} (en-de) from {url}")
    assert "'local' source" in msg and str(home / NAME / f"{NAME}.en-de.src") in msg
    assert not (home / NAME / "raw" / f"{NAME}.fake.tgz").exists()
    assert not (tmp_path / "out").exists()


def test_unknown_test_set_lists_the_known_ones(tmp_path):
    with pytest.raises(WordorderError) as e:
        fetch({"kind": "sacrebleu", "test_set": "wmt99"}, tmp_path)
    assert "no test set 'wmt99'" in str(e.value) and "wmt14" in e.value.hint


def test_unknown_langpair_lists_the_pairs_of_the_set(tmp_path):
    with pytest.raises(WordorderError) as e:
        fetch({"kind": "sacrebleu", "test_set": "wmt14"}, tmp_path, "en", "ja")
    assert "'wmt14' has no language pair 'en-ja'" in str(e.value)
    assert "en-de" in e.value.hint


def test_langpair_must_match_the_corpus_pair(tmp_path):
    with pytest.raises(WordorderError, match="does not match the corpus pair en-de"):
        fetch({"kind": "sacrebleu", "test_set": "wmt14", "langpair": "en-fr"}, tmp_path)


def test_a_corrupt_download_is_an_error_not_an_exit_and_is_removed(served, tmp_path, monkeypatch):
    base, root = served
    (root / "fake.tgz").write_bytes(tarball())
    home = register(monkeypatch, tmp_path, base + "/fake.tgz", "0" * 32)  # sacreBLEU calls sys.exit
    with pytest.raises(WordorderError, match="sacreBLEU gave up"):
        fetch({"kind": "sacrebleu", "test_set": NAME, "langpair": "en-de"}, tmp_path)
    assert not (home / NAME / "raw" / f"{NAME}.fake.tgz").exists()
