"""The ``train`` step: subword files in, best checkpoint out.

Reads the subword-encoded training and dev data, builds the variant's model, and runs the
training loop with dev BLEU (on the pipeline's tokenization, ``tokenize='none'``) as the
model-selection criterion.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.io import read_lines, read_parallel
from wordorder.model_io.features import check_feature_files, load_features
from wordorder.model_io.subwords import read_ids, subword_models, word_starts


def read_source_features(
    options: Any,
    files: Mapping[str, Mapping[str, str]],
    train_src: list[list[int]],
    dev_src: list[list[int]],
) -> tuple[dict, dict, dict]:
    """Train and dev features of the model's ``required_features`` (a missing or an unneeded
    file is an error: the DAG and the variant disagree)."""
    check_feature_files(options.required_features(), files)
    train_feats, vocabs = load_features({k: v["train"] for k, v in files.items()}, train_src)
    dev_feats, _ = load_features({k: v["dev"] for k, v in files.items()}, dev_src, vocabs)
    return train_feats, dev_feats, vocabs


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def run_training(
    train_src: Path,
    train_tgt: Path,
    dev_src: Path,
    dev_ref: Path,
    spm: Path,
    model_options: Mapping[str, Any],
    train_options: Mapping[str, Any],
    seed: int,
    threads: int | None,
    output: Path,
    features: Mapping[str, Mapping[str, str]] | None = None,
    state: Path | None = None,
    spm_tgt: Path | None = None,
) -> dict:
    """Train one model; ``output`` is the best checkpoint (its folder receives the other files).

    ``spm`` is the joint subword model, or the source side's when ``spm_tgt`` gives the
    target side its own (``subword.joint: false``); the model then has a vocabulary per side.

    ``features``: extra source inputs the variant needs, ``{name: {"train": path, "dev": path}}``
    (see :mod:`wordorder.model_io.features`); their tag vocabularies go into the checkpoint.
    ``state``: the resumable training state (see :mod:`wordorder.train.resume`).
    """
    import sacrebleu
    import torch

    from wordorder.model_io.features import vocab_sizes
    from wordorder.model_io.subwords import vocab_digest
    from wordorder.models.registry import build_model, resolve_options
    from wordorder.train.loop import TrainOptions, train

    opts = TrainOptions.from_dict(
        {**train_options, "seed": seed, **({"threads": threads} if threads else {})}
    )
    if output.name != "best.pt":
        raise WordorderError("the training output must be named best.pt", path=output)
    if opts.threads:
        torch.set_num_threads(opts.threads)
    seed_everything(seed)
    sp_src, sp = subword_models(spm, spm_tgt)  # sp: the target side's
    src_lines, tgt_lines = read_parallel(train_src, train_tgt)
    pairs = list(zip(read_ids(src_lines, sp_src, train_src), read_ids(tgt_lines, sp, train_tgt)))
    dev_ids = dev_all = read_ids(read_lines(dev_src), sp_src, dev_src)
    refs = read_lines(dev_ref)
    if len(refs) != len(dev_ids):
        raise WordorderError(
            f"{len(dev_ids)} dev sources but {len(refs)} references in {dev_ref}", path=dev_src
        )
    if opts.eval_sentences:
        dev_ids, refs = dev_ids[: opts.eval_sentences], refs[: opts.eval_sentences]

    def dev_bleu(hyps: list[list[int]]) -> float:
        text = [" ".join(sp.decode_ids(h)) for h in hyps]
        # Both sides are the pipeline's tokenized text by design (a proxy for model selection;
        # the reported scores detokenize): force stops sacrebleu's warning about it.
        return sacrebleu.corpus_bleu(text, [refs], tokenize="none", force=True).score

    dev_tgt = [sp.encode_ids(line.split()) for line in refs]  # for the dev loss

    options = resolve_options(dict(model_options))
    train_feats, dev_feats, vocabs = read_source_features(
        options, features or {}, [p[0] for p in pairs], dev_all
    )
    if dev_feats and opts.eval_sentences:
        dev_feats = {k: v[: opts.eval_sentences] for k, v in dev_feats.items()}
    options.feature_sizes = vocab_sizes(vocabs)
    if sp is not sp_src and options.tie_embeddings:
        raise WordorderError(
            "the model ties its source and target embeddings (tie_embeddings), but each side has "
            "a subword model of its own",
            path=spm_tgt,
            hint="set tie_embeddings: false for separate vocabularies, or subword.joint: true",
        )
    model = build_model(options, vocab_size=sp_src.vocab_size, tgt_vocab_size=sp.vocab_size)
    if getattr(options, "position_unit", "subword") == "word":  # source positions count words
        model.set_word_starts(word_starts(sp_src))  # type: ignore[operator]
    meta = {
        "spm": str(spm),
        "spm_vocab": vocab_digest(sp_src),  # decoding refuses a subword model of other pieces
        "model_options": dict(model_options),
        "seed": seed,
        "feature_vocabs": {name: v.itos for name, v in vocabs.items()},
    }
    if sp is not sp_src:
        meta["spm_tgt"] = str(spm_tgt)
        meta["spm_tgt_vocab"] = vocab_digest(sp)
    summary = train(
        model,
        pairs,
        dev_ids,
        dev_bleu,
        opts,
        output.parent,
        extra_checkpoint_meta=meta,
        dev_tgt=dev_tgt,
        train_feats=train_feats or None,
        dev_feats=dev_feats or None,
        state_path=state,
    )
    if not output.is_file():
        raise WordorderError("training ended without a best checkpoint", path=output)
    # Why and where training stopped, for the convergence table (a record of its own, so that
    # readers of the interval records, e.g. the median tokens/s, do not see it).
    if os.environ.get("RANK", "0") == "0":  # under torchrun only rank 0 writes the log
        append_summary(output, summary)
    return summary


def append_summary(output: Path, summary: Mapping[str, Any]) -> None:
    """Append the summary record to the finished run's metrics.jsonl. A log that is gone was
    withdrawn with the job's outputs (Snakemake deletes them when the job ends unfinished):
    appending would create a log of the summary alone, so the outputs go and this fails."""
    metrics = output.parent / "metrics.jsonl"
    try:
        fd = os.open(metrics, os.O_WRONLY | os.O_APPEND)  # never O_CREAT
    except FileNotFoundError:
        output.unlink(missing_ok=True)
        raise WordorderError(
            "the metrics log was removed before training ended (the job was stopped?)",
            path=metrics,
            hint="run the job again: it restores the finished training's outputs",
        ) from None
    with open(fd, "a", encoding="utf-8") as f:
        f.write(json.dumps({"summary": summary}) + "\n")
