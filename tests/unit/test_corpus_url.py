"""The url source against a local HTTP server: archives, resume, checksums,
unsafe members, offline."""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import socket
import tarfile
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wordorder.corpus import download
from wordorder.corpus.archive import safe_extract
from wordorder.corpus.sources import fetch_source
from wordorder.errors import WordorderError

DEFAULT_BACKOFF = download.BACKOFF
EN = [f"sentence number {i} ." for i in range(200)]
DE = [f"Satz Nummer {i} ." for i in range(200)]


def text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_tar(
    members: dict[str, bytes], mode: str = "w:gz", links: dict[str, str] | None = None
) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buf.getvalue()


class Server:
    """Serves ``files`` (path -> bytes); ``/cut/...`` paths break off half-way the first time;
    ``/norange/...`` paths ignore Range headers; ``/flaky/...`` answer 503 the first time.
    Records every request and the bytes sent."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.sent = 0
        self.cut_done: set[str] = set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output quiet
                pass

            def do_GET(self):
                rng = self.headers.get("Range")
                server.requests.append((self.path, rng))
                data = server.files.get(self.path)
                if self.path.startswith("/flaky/") and self.path not in server.cut_done:
                    server.cut_done.add(self.path)
                    self.send_error(503)
                    return
                if data is None:
                    self.send_error(404)
                    return
                start = 0
                m = re.match(r"bytes=(\d+)-$", rng or "")
                if m and not self.path.startswith("/norange/"):
                    start = int(m.group(1))
                    if start >= len(data):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path.startswith("/cut/") and self.path not in server.cut_done:
                    server.cut_done.add(self.path)
                    body = body[: len(body) // 2]
                    self.close_connection = True
                # before writing: the client may finish before this thread resumes
                server.sent += len(body)
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    monkeypatch.setattr(download, "BACKOFF", 0.01)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(spec, tmp_path, src="en", tgt="de"):
    out_src, out_tgt = tmp_path / "out" / "src", tmp_path / "out" / "tgt"
    n = fetch_source(spec, src, tgt, out_src, out_tgt, tmp_path / "cache")
    return (
        n,
        out_src.read_text(encoding="utf-8").splitlines(),
        out_tgt.read_text(encoding="utf-8").splitlines(),
    )


def test_tar_gz_with_two_members_is_downloaded_once_and_cached(server, tmp_path):
    data = make_tar({"corpus/train.en": text(EN), "corpus/train.de": text(DE)})
    server.files["/c.tar.gz"] = data
    spec = {
        "kind": "url",
        "url": server.url + "/c.tar.gz",
        "sha256": sha(data).upper(),
        "src": "corpus/train.{src}",
        "tgt": "corpus/train.{tgt}",
    }
    assert fetch(spec, tmp_path) == (200, EN, DE)
    assert fetch(spec, tmp_path, "de", "en") == (200, DE, EN)  # same download, other direction
    assert len(server.requests) == 1
    assert (tmp_path / "cache" / sha(data) / "c.tar.gz").is_file()


def test_zip_archive_and_missing_member_lists_members(server, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("d/a.en", text(EN[:3]))
        zf.writestr("d/a.de", text(DE[:3]))
    server.files["/c.zip"] = buf.getvalue()
    spec = {
        "kind": "url",
        "url": server.url + "/c.zip",
        "sha256": sha(buf.getvalue()),
        "src": "d/a.{src}",
        "tgt": "d/a.{tgt}",
    }
    assert fetch(spec, tmp_path) == (3, EN[:3], DE[:3])
    with pytest.raises(WordorderError, match=r"no member 'd/b.en'.*\n.*members: d/a.de, d/a.en"):
        fetch({**spec, "src": "d/b.{src}"}, tmp_path)


def test_two_separate_gz_files(server, tmp_path):
    en, de = gzip.compress(text(EN)), gzip.compress(text(DE))
    server.files.update({"/train.en.gz": en, "/train.de.gz": de})
    spec = {
        "kind": "url",
        "src": {"url": server.url + "/train.en.gz", "sha256": sha(en)},
        "tgt": {"url": server.url + "/train.de.gz", "sha256": sha(de)},
    }
    assert fetch(spec, tmp_path) == (200, EN, DE)


def test_cut_off_download_resumes_with_range(server, tmp_path):
    en, de = text(EN), text(DE)
    server.files.update({"/cut/big.en": en, "/big.de": de})
    spec = {
        "kind": "url",
        "src": {"url": server.url + "/cut/big.en", "sha256": sha(en)},
        "tgt": {"url": server.url + "/big.de", "sha256": sha(de)},
    }
    assert fetch(spec, tmp_path) == (200, EN, DE)
    en_requests = [r for r in server.requests if r[0] == "/cut/big.en"]
    assert en_requests == [("/cut/big.en", None), ("/cut/big.en", f"bytes={len(en) // 2}-")]
    assert server.sent == len(en) + len(de)  # nothing was sent twice


def test_a_partial_file_left_by_an_earlier_run_is_continued(server, tmp_path):
    en, de = text(EN), text(DE)
    server.files.update({"/a.en": en, "/a.de": de})
    part = tmp_path / "cache" / sha(en) / "a.en.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(en[:1000])
    spec = {
        "kind": "url",
        "src": {"url": server.url + "/a.en", "sha256": sha(en)},
        "tgt": {"url": server.url + "/a.de", "sha256": sha(de)},
    }
    assert fetch(spec, tmp_path) == (200, EN, DE)
    assert ("/a.en", "bytes=1000-") in server.requests
    assert server.sent == len(en) - 1000 + len(de)
    assert not part.exists()


def test_a_complete_part_file_is_taken_when_the_server_has_nothing_more(server, tmp_path):
    en, de = text(EN), text(DE)
    server.files.update({"/a.en": en, "/flaky/a.de": de})
    part = tmp_path / "cache" / sha(en) / "a.en.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(en)  # e.g. killed between the download and the rename
    spec = {
        "kind": "url",
        "src": {"url": server.url + "/a.en", "sha256": sha(en)},
        "tgt": {"url": server.url + "/flaky/a.de", "sha256": sha(de)},
    }
    assert fetch(spec, tmp_path) == (200, EN, DE)
    assert ("/a.en", f"bytes={len(en)}-") in server.requests  # answered 416
    assert [r for r in server.requests if r[0] == "/flaky/a.de"] == [("/flaky/a.de", None)] * 2
    assert server.sent == len(de)


def test_server_ignoring_range_means_starting_over(server, tmp_path):
    en, de = text(EN), text(DE)
    server.files.update({"/norange/a.en": en, "/a.de": de})
    part = tmp_path / "cache" / sha(en) / "a.en.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"garbage that must not stay in front")
    spec = {
        "kind": "url",
        "src": {"url": server.url + "/norange/a.en", "sha256": sha(en)},
        "tgt": {"url": server.url + "/a.de", "sha256": sha(de)},
    }
    assert fetch(spec, tmp_path) == (200, EN, DE)


def test_wrong_sha256_is_an_error_and_leaves_no_file(server, tmp_path):
    data = make_tar({"a.en": text(EN), "a.de": text(DE)})
    server.files["/c.tgz"] = data
    wrong = "0" * 64
    spec = {
        "kind": "url",
        "url": server.url + "/c.tgz",
        "sha256": wrong,
        "src": "a.en",
        "tgt": "a.de",
    }
    with pytest.raises(WordorderError) as e:
        fetch(spec, tmp_path)
    msg = str(e.value)
    assert server.url + "/c.tgz" in msg and wrong in msg and sha(data) in msg
    entry = tmp_path / "cache" / wrong
    assert not [p.name for p in entry.iterdir() if not p.name.startswith(".lock")]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_http_404_is_not_retried(server, tmp_path):
    spec = {
        "kind": "url",
        "url": server.url + "/missing.tgz",
        "sha256": "1" * 64,
        "src": "a",
        "tgt": "b",
    }
    with pytest.raises(WordorderError, match="HTTP 404"):
        fetch(spec, tmp_path)
    assert len(server.requests) == 1


@pytest.mark.parametrize("bad", ["../evil", "ABSOLUTE"])
def test_unsafe_member_names_are_refused(server, tmp_path, bad):
    outside = tmp_path / "evil"
    name = str(outside) if bad == "ABSOLUTE" else bad
    data = make_tar({"ok.en": text(EN), name: b"pwned\n", "ok.de": text(DE)}, mode="w")
    server.files["/bad.tar"] = data
    spec = {
        "kind": "url",
        "url": server.url + "/bad.tar",
        "sha256": sha(data),
        "src": "ok.en",
        "tgt": "ok.de",
    }
    with pytest.raises(WordorderError) as e:
        fetch(spec, tmp_path)
    assert "bad.tar" in str(e.value) and repr(name) in str(e.value)
    assert not outside.exists()
    assert not (tmp_path / "cache" / sha(data) / "unpacked").exists()
    assert not list((tmp_path / "cache" / sha(data)).glob(".unpacked.*"))  # temp dir removed


def test_links_pointing_outside_are_refused(tmp_path):
    archive = tmp_path / "links.tar"
    archive.write_bytes(make_tar({"a.en": b"x\n"}, mode="w", links={"sub/up": "../../escape"}))
    with pytest.raises(WordorderError, match=r"'sub/up': it links to '../../escape'"):
        safe_extract(archive, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
    # A link that stays inside is fine.
    archive.write_bytes(make_tar({"a.en": b"x\n"}, mode="w", links={"sub/up": "../a.en"}))
    safe_extract(archive, tmp_path / "dest")
    assert (tmp_path / "dest" / "sub" / "up").read_bytes() == b"x\n"


def test_zip_with_dotdot_is_refused(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../evil", b"x")
    (tmp_path / "a.zip").write_bytes(buf.getvalue())
    with pytest.raises(WordorderError, match=r"'\.\./evil': it has a '\.\.' component"):
        safe_extract(tmp_path / "a.zip", tmp_path / "sub" / "dest")
    assert not (tmp_path / "evil").exists() and not (tmp_path / "sub" / "evil").exists()


def test_unreachable_url_fails_fast_with_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setattr(download, "BACKOFF", DEFAULT_BACKOFF)  # the real retry timing
    url = f"http://127.0.0.1:{closed_port()}/corpus.tgz"
    spec = {"kind": "url", "url": url, "sha256": "a" * 64, "src": "x", "tgt": "y"}
    start = time.monotonic()
    with pytest.raises(WordorderError) as e:
        fetch(spec, tmp_path)
    assert time.monotonic() - start < 15
    msg = str(e.value)
    assert f"could not download {url} after 3 tries" in msg
    assert str(tmp_path / "cache" / ("a" * 64) / "corpus.tgz") in msg and "'local' source" in msg


def test_a_file_placed_by_hand_in_the_cache_is_used_offline(tmp_path):
    data = make_tar({"a.en": text(EN[:5]), "a.de": text(DE[:5])})
    url = f"http://127.0.0.1:{closed_port()}/c.tgz"
    placed = tmp_path / "cache" / sha(data) / "c.tgz"
    placed.parent.mkdir(parents=True)
    placed.write_bytes(data)
    spec = {"kind": "url", "url": url, "sha256": sha(data), "src": "a.{src}", "tgt": "a.{tgt}"}
    assert fetch(spec, tmp_path) == (5, EN[:5], DE[:5])
    placed.write_bytes(data + b"changed")  # a wrong file placed by hand is reported, not deleted
    (placed.parent / ".c.tgz.verified").unlink()
    with pytest.raises(WordorderError, match="checksum mismatch"):
        fetch(spec, tmp_path)
    assert placed.exists()


def test_file_url(tmp_path):
    (tmp_path / "src.txt").write_bytes(text(EN[:4]))
    (tmp_path / "tgt.gz").write_bytes(gzip.compress(text(DE[:4])))
    spec = {
        "kind": "url",
        "src": {"url": (tmp_path / "src.txt").as_uri(), "sha256": sha(text(EN[:4]))},
        "tgt": {
            "url": (tmp_path / "tgt.gz").as_uri(),
            "sha256": sha((tmp_path / "tgt.gz").read_bytes()),
        },
    }
    assert fetch(spec, tmp_path) == (4, EN[:4], DE[:4])


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"url": "ftp://x/y", "sha256": "a" * 64, "src": "a", "tgt": "b"}, "must be an http"),
        ({"url": "http://x/y", "sha256": "xyz", "src": "a", "tgt": "b"}, "64 hexadecimal digits"),
        (
            {
                "src": {"url": "http://x/a", "sha256": "a" * 64, "md5": "1"},
                "tgt": {"url": "http://x/b", "sha256": "b" * 64},
            },
            "unknown key 'md5' in 'src' of the url source",
        ),
        ({"src": "a", "tgt": "b"}, "or a mapping with its own url and sha256"),
        (
            {"url": "http://x/y", "sha256": "a" * 64, "src": "a", "tgt": "b", "retries": 0},
            "retries",
        ),
    ],
)
def test_bad_url_specs(tmp_path, spec, message):
    with pytest.raises(WordorderError, match=re.escape(message)):
        fetch({"kind": "url", **spec}, tmp_path)


def test_two_jobs_fetching_the_same_archive_at_once_share_one_download(server, tmp_path):
    data = make_tar({"a.en": text(EN), "a.de": text(DE)})
    server.files["/c.tgz"] = data
    spec = {
        "kind": "url",
        "url": server.url + "/c.tgz",
        "sha256": sha(data),
        "src": "a.{src}",
        "tgt": "a.{tgt}",
    }
    results, errors = {}, []

    def job(name):
        try:
            out = tmp_path / name
            results[name] = fetch_source(spec, "en", "de", out / "s", out / "t", tmp_path / "cache")
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=job, args=(name,)) for name in ("en", "de")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and results == {"en": 200, "de": 200}
    assert len(server.requests) == 1
    assert (tmp_path / "de" / "t").read_text(encoding="utf-8") == text(DE).decode()


def test_source_and_target_must_be_two_files(server, tmp_path):
    # a member that is a link to the other
    data = make_tar({"c.en": text(EN)}, links={"c.de": "c.en"})
    server.files["/c.tgz"] = data
    spec = {
        "kind": "url",
        "url": server.url + "/c.tgz",
        "sha256": sha(data),
        "src": "c.en",
        "tgt": "c.de",
    }
    with pytest.raises(
        WordorderError, match=r"'src' and 'tgt' of the url source are the same file"
    ):
        fetch(spec, tmp_path)
    with pytest.raises(
        WordorderError, match=r"'src' and 'tgt' of the url source name the same member"
    ):
        fetch({**spec, "tgt": "c.en"}, tmp_path)
    with pytest.raises(
        WordorderError, match=r"'src.url' and 'tgt.url' of the url source give the same file"
    ):
        side = {"url": server.url + "/c.tgz", "sha256": sha(data), "member": "c.en"}
        fetch({"kind": "url", "src": side, "tgt": side}, tmp_path)


def test_url_caps_are_read_from_the_spec(server, tmp_path):
    data = make_tar({"a.en": text(EN), "a.de": text(DE)})
    server.files["/c.tgz"] = data
    spec = {
        "kind": "url",
        "url": server.url + "/c.tgz",
        "sha256": sha(data),
        "src": "a.{src}",
        "tgt": "a.{tgt}",
        "max_download_bytes": len(data) - 1,
    }
    with pytest.raises(WordorderError, match=f"announces {len(data):,} bytes"):
        fetch(spec, tmp_path)
    assert (
        fetch({**spec, "max_download_bytes": len(data), "max_unpacked_bytes": "10K"}, tmp_path)[0]
        == 200
    )
    with pytest.raises(
        WordorderError, match="'max_unpacked_bytes' in url source must be a positive number"
    ):
        fetch({**spec, "max_unpacked_bytes": "lots"}, tmp_path)
