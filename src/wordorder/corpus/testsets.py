"""The ``sacrebleu`` source: official WMT (and other) test sets through sacreBLEU's own code.

``{kind: sacrebleu, test_set: wmt14, langpair: en-de}`` with optional ``origlang`` and
``subset`` (sacreBLEU's filters). sacreBLEU keeps its data in ``$SACREBLEU`` (default
``~/.sacrebleu``); when the files are there nothing is downloaded. Otherwise sacreBLEU
downloads them, which it does without any timeout; so the download host is probed first
with a short timeout and the download runs under a socket timeout, and an offline machine
gets one clear error within seconds. The first reference is used as the target side.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

from wordorder.corpus.base import Source, iter_file_pairs, need_str
from wordorder.corpus.download import DEFAULT_TIMEOUT, unreachable
from wordorder.errors import WordorderError

TIMEOUT = DEFAULT_TIMEOUT  # seconds for the reachability probe and each socket operation


class SacrebleuSource(Source):
    kind = "sacrebleu"
    required = ("test_set",)
    optional = ("langpair", "origlang", "subset")

    def validate(self) -> None:
        for key in ("test_set", *self.optional):
            if key in self.spec:
                need_str(self.spec, key, self.where)

    def describe(self, src_lang: str, tgt_lang: str) -> str:
        return f"sacrebleu test set '{self.spec['test_set']}'"

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        from sacrebleu.dataset import DATASETS

        name = self.spec["test_set"]
        if name not in DATASETS:
            raise WordorderError(
                f"sacrebleu has no test set '{name}'",
                hint=f"test sets: {', '.join(sorted(DATASETS))}",
            )
        dataset = DATASETS[name]
        langpair = self.spec.get("langpair", f"{src_lang}-{tgt_lang}")
        if langpair not in dataset.langpairs:
            raise WordorderError(
                f"sacrebleu test set '{name}' has no language pair '{langpair}'",
                hint=f"its pairs: {', '.join(sorted(dataset.langpairs))}",
            )
        a, _, b = langpair.partition("-")
        if {a, b} != {src_lang, tgt_lang}:
            raise WordorderError(
                f"sacrebleu pair '{langpair}' does not match the corpus pair {src_lang}-{tgt_lang}"
            )
        source, reference = _files(name, dataset, langpair)
        swap = a != src_lang  # e.g. the de-en test set read as the en side of an en-de pair...
        lines = iter_file_pairs(Path(source), Path(reference))
        if "origlang" in self.spec or "subset" in self.spec:
            lines = self._filtered(list(lines), name, langpair)
        return ((t, s) for s, t in lines) if swap else lines

    def _filtered(self, lines: list[tuple[str, str]], name: str, langpair: str):
        from sacrebleu.utils import filter_subset

        try:
            src, ref = filter_subset(
                [[s for s, _ in lines], [t for _, t in lines]],
                name,
                langpair,
                self.spec.get("origlang"),
                self.spec.get("subset"),
            )
        except Exception as e:  # sacrebleu raises bare Exceptions for unsupported filters
            raise WordorderError(f"cannot filter sacrebleu test set '{name}': {e}") from None
        return iter(list(zip(src, ref)))


def _files(name: str, dataset, langpair: str) -> tuple[str, str]:
    """Source and first reference file of a test set, downloading it (bounded) if needed."""
    fields = dataset.fieldnames(langpair)
    texts = [dataset._get_txt_file_path(langpair, f) for f in fields]
    if not all(os.path.exists(t) for t in texts):
        tarballs = [
            os.path.join(dataset._rawdir, dataset._get_tarball_filename(u))
            for u in dataset.data or []
        ]
        missing = [(u, t) for u, t in zip(dataset.data or [], tarballs) if not os.path.exists(t)]
        for url, _ in missing:
            why = unreachable(url, TIMEOUT)
            if why:
                raise _offline(name, langpair, url, why, texts, tarballs)
        old = socket.getdefaulttimeout()
        socket.setdefaulttimeout(TIMEOUT)  # sacrebleu's urlopen has no timeout of its own
        try:
            dataset.get_files(langpair)
        except (Exception, SystemExit) as e:  # sacrebleu calls sys.exit on a bad checksum
            for _, tarball in missing:  # never leave a partial download that looks complete
                if os.path.exists(tarball):
                    os.remove(tarball)
            url = missing[0][0] if missing else "(cached files)"
            why = (
                "sacreBLEU gave up (its log above says why, e.g. a wrong checksum)"
                if isinstance(e, SystemExit)
                else f"{type(e).__name__}: {e}"
            )
            raise _offline(name, langpair, url, why, texts, tarballs) from None
        finally:
            socket.setdefaulttimeout(old)
    return dataset.get_source_file(langpair), dataset.get_reference_files(langpair)[0]


def _offline(name, langpair, url, why, texts, tarballs) -> WordorderError:
    return WordorderError(
        f"could not download sacrebleu test set {name} ({langpair}) from {url}: {why}",
        hint="provide it another way: a 'local' source with the source and reference files, "
        "or copy sacreBLEU's data directory from a machine with network access so that "
        f"these exist: {', '.join(texts[:2])} (or the download {', '.join(tarballs)}); "
        "set $SACREBLEU to use another directory",
    )
