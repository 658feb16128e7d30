"""Parse a tokenized corpus (or one shard of it) into CoNLL-U, then gather shards.

A shard ``k-of-n`` (Snakemake's scatter item) covers input lines [⌊(k−1)L/n⌋, ⌊kL/n⌋), so
shards run in parallel locally or on a cluster and concatenate back in line order.

Fallbacks are counted, logged and marked in the CoNLL-U (``# fallback = ...``):
``empty`` (an empty line: a sentence with no tokens), ``flat`` (the parser failed on the
sentence: every token attached to the last one), ``multiroot`` (extra roots attached to the
first). Nothing ever shifts: sentence *k* has exactly the tokens of line *k*.
"""

from __future__ import annotations

import json
import logging
import time
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path

import numpy as np

from wordorder.errors import WordorderError
from wordorder.io import atomic_paths, iter_lines
from wordorder.progress import progress
from wordorder.syntax.backends import Backend, get_backend
from wordorder.syntax.conllu import Sentence, read_conllu, write_conllu

log = logging.getLogger(__name__)


@dataclass
class ParseStats:
    """What a parse did: counts, fallbacks by kind, and throughput."""

    backend: str = ""
    has_trees: bool = True
    sentences: int = 0
    tokens: int = 0
    fallbacks: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def sentences_per_second(self) -> float:
        return self.sentences / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict:
        d = asdict(self)
        d["sentences_per_second"] = round(self.sentences_per_second, 1)
        d["fallback_share"] = (
            round(sum(self.fallbacks.values()) / self.sentences, 6) if self.sentences else 0.0
        )
        return d


def parse_scatter_item(item: str) -> tuple[int, int]:
    """``"2-of-4"`` -> (2, 4)."""
    try:
        k, n = (int(x) for x in item.split("-of-"))
    except ValueError:
        raise WordorderError(f"bad shard {item!r}: expected K-of-N, e.g. 1-of-4") from None
    if not 1 <= k <= n:
        raise WordorderError(f"bad shard {item!r}: K must be in 1..N")
    return k, n


def shard_range(total: int, k: int, n: int) -> tuple[int, int]:
    """0-based [start, end) of the lines of shard k (1-based) of n."""
    return (k - 1) * total // n, k * total // n


def flat_sentence(tokens: Sequence[str], reason: str) -> Sentence:
    """Fallback parse: every token attached to the last token (the root), POS unknown."""
    n = len(tokens)
    heads = np.full(n, n, dtype=np.int64)
    if n:
        heads[-1] = 0
    deprels = ["dep"] * n
    if n:
        deprels[-1] = "root"
    return Sentence(list(tokens), ["_"] * n, ["X"] * n, ["_"] * n, heads, deprels, reason)


def _check_tokens(path: Path, number: int, tokens: Sequence[str]) -> None:
    for tok in tokens:
        if any(unicodedata.category(ch) == "Cc" for ch in tok):
            raise WordorderError(
                f"the token {tok!r} contains a control character",
                path=path,
                line=number,
                hint="clean the corpus (wordorder removes control characters "
                "when it tokenizes); parse only files the pipeline tokenized",
            )


def _parse_batch(backend: Backend, batch: list[list[str]]) -> list[Sentence]:
    """Parse non-empty token lists; on failure retry one by one and fall back to a flat tree."""
    try:
        return backend.parse(batch)
    except Exception as e:  # the parser itself failed: isolate the sentence(s)
        log.warning(
            "%s failed on a batch (%s); parsing its %d sentences one by one",
            backend.name,
            e,
            len(batch),
        )
    out = []
    for tokens in batch:
        try:
            out.extend(backend.parse([tokens]))
        except Exception as e:
            log.warning("%s failed on %r (%s): flat tree", backend.name, " ".join(tokens)[:80], e)
            out.append(flat_sentence(tokens, "flat"))
    return out


def _batches(lines: Iterator[tuple[int, str]], size: int) -> Iterator[list[tuple[int, str]]]:
    while batch := list(islice(lines, size)):
        yield batch


def parse_file(
    inp: str | Path,
    out: str | Path,
    lang: str,
    parsers: dict | None = None,
    shard: tuple[int, int] = (1, 1),
    batch_size: int = 256,
    progress_bar: bool = True,
) -> ParseStats:
    """Parse shard ``shard`` of the tokenized file ``inp`` into the CoNLL-U file ``out`` (atomic).

    Returns the counts; they are also written beside ``out`` as ``<out>.json``.
    """
    inp, out = Path(inp), Path(out)
    backend = get_backend(lang, parsers, batch_size)
    total = sum(1 for _ in iter_lines(inp))
    start, end = shard_range(total, *shard)
    stats = ParseStats(backend=backend.name, has_trees=backend.has_trees)
    fallbacks: Counter[str] = Counter()
    t0 = time.perf_counter()
    lines = (
        (n, line) for n, line in enumerate(islice(iter_lines(inp), start, end), start=start + 1)
    )
    bar = progress(
        desc=f"parse[{backend.name}] {inp.name} {shard[0]}-of-{shard[1]}",
        unit=" sent",
        total=end - start,
        enabled=progress_bar,
    )
    with (
        bar,
        atomic_paths(out, Path(f"{out}.json")) as (tmp, tmp_json),
        open(tmp, "w", encoding="utf-8") as f,
    ):
        for batch in _batches(lines, batch_size):
            tokens = [line.split() for _, line in batch]
            for (number, _), toks in zip(batch, tokens):
                _check_tokens(inp, number, toks)
            todo = [t for t in tokens if t]
            parsed = iter(_parse_batch(backend, todo)) if todo else iter(())
            sents = [
                next(parsed) if t else Sentence([], [], [], [], np.zeros(0, np.int64), [], "empty")
                for t in tokens
            ]
            for (number, _), toks, sent in zip(batch, tokens, sents):
                if sent.forms != toks:  # never a silent shift of indices
                    raise RuntimeError(
                        f"{inp}:{number}: the parse does not have the tokens of the line"
                    )
                if not backend.has_trees and sent.fallback != "empty":
                    sent.heads = None
                if sent.fallback:
                    fallbacks[sent.fallback] += 1
                stats.tokens += len(toks)
            write_conllu(f, sents, first_id=batch[0][0])
            stats.sentences += len(batch)
            bar.update(len(batch))
        stats.seconds = round(time.perf_counter() - t0, 3)
        stats.fallbacks = dict(fallbacks)
        tmp_json.write_text(json.dumps(stats.to_json(), indent=1) + "\n", encoding="utf-8")
    for kind, count in sorted(fallbacks.items()):
        log.warning("%d of %d sentences: fallback %s", count, stats.sentences, kind)
    return stats


def gather(
    shards: Sequence[str | Path], tokenized: str | Path, out: str | Path, summary: str | Path
) -> dict:
    """Concatenate shard CoNLL-U files in order, checking every sentence against its input line.

    Writes ``out`` and a JSON ``summary`` (summed counts of the shards); returns the summary.
    """
    tokenized, out = Path(tokenized), Path(out)
    lines = iter_lines(tokenized)
    counts = {"sentences": 0, "tokens": 0}
    seconds = 0.0
    fallbacks: Counter[str] = Counter()
    backend, has_trees = "", True
    with atomic_paths(out, summary) as (tmp, tmp_summary), open(tmp, "w", encoding="utf-8") as f:
        number = 0
        for shard in shards:
            shard = Path(shard)
            for sent in read_conllu(shard):
                number += 1
                line = next(lines, None)
                if line is None or line.split() != sent.forms:
                    raise WordorderError(
                        (
                            f"sentence {number} of the parse does not match "
                            f"line {number} of {tokenized}"
                        ),
                        path=shard,
                        hint="the parse is stale or from another file: delete it and rerun",
                    )
                write_conllu(f, [sent], first_id=number)
            st = json.loads(Path(f"{shard}.json").read_text(encoding="utf-8"))
            backend, has_trees = st["backend"], st["has_trees"]
            for key in counts:
                counts[key] += st[key]
            seconds += st["seconds"]
            fallbacks.update(st["fallbacks"])
        if next(lines, None) is not None:
            raise WordorderError(
                f"the shards hold {number} sentences but {tokenized} has more lines",
                path=tokenized,
                hint="rerun the parse of every shard",
            )
        result = ParseStats(
            backend,
            has_trees,
            counts["sentences"],
            counts["tokens"],
            dict(fallbacks),
            round(seconds, 3),
        ).to_json()
        Path(tmp_summary).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result
