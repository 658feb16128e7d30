"""One language pair's data block (``data.<pair>`` of the config): its language codes, its
splits (train, dev, then the test sets) and each split's corpus source. Used by the config
checks, the corpus preparation and the Snakemake rules alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SPLITS = ("train", "dev")


def pair_langs(pair: str) -> tuple[str, str]:
    src, tgt = pair.split("-")
    return src, tgt


def split_names(pair_data: Mapping[str, Any]) -> list[str]:
    """All split names of a pair: train, dev, then the test sets in config order."""
    return [*SPLITS, *pair_data["test"]]


def split_spec(pair_data: Mapping[str, Any], split: str) -> Mapping[str, Any]:
    """A split's corpus source (a test set's ``extra_refs`` are left to
    :func:`split_extra_refs`)."""
    from wordorder.corpus.references import without_extra_refs

    return without_extra_refs(pair_data[split] if split in SPLITS else pair_data["test"][split])


def split_extra_refs(pair_data: Mapping[str, Any], split: str) -> list[str]:
    """A test set's further reference files (none for train and dev)."""
    from wordorder.corpus.references import extra_refs

    if split in SPLITS:
        return []
    return extra_refs(pair_data["test"][split], f"the test set '{split}'")


def testset_entry(pair_data: Mapping[str, Any], split: str) -> Mapping[str, Any]:
    """A test set's whole entry, its extra references included."""
    return pair_data["test"][split]


def is_holdout(spec: Mapping[str, Any]) -> bool:
    return "holdout" in spec


def source_files(pair_data: Mapping[str, Any], split: str, pair: str) -> list[str]:
    """The user's files a split's corpus source reads (``local``, ``manual``, their ``concat``
    parts), the fetch job's inputs: an edit of one reruns the job and what follows. Only those
    that exist: the job itself reports a missing one, with where to put it and, for a licensed
    corpus, how to obtain it."""
    from wordorder.corpus.sources import make_source

    files = make_source(split_spec(pair_data, split)).local_files(*pair_langs(pair))
    return [str(p) for p in files if p.is_file()]


def extra_ref_file(pair_data: Mapping[str, Any], split: str, number: int, pair: str) -> list[str]:
    """The ``number``-th (1-based) further reference file of a test set, the input of the job
    preparing it (none where it does not exist: that job says so)."""
    from wordorder.corpus.base import local_path

    refs = split_extra_refs(pair_data, split)
    if not 1 <= number <= len(refs):
        return []
    path = local_path(refs[number - 1], *pair_langs(pair))
    return [str(path)] if path.is_file() else []
