"""The ``translate`` step: a checkpoint and a subword-encoded source file in, translations out.

Writes two line-aligned files: the detokenized hypotheses (for sacreBLEU) and the hypotheses
in the pipeline's tokenization (for tokenized BLEU and the word-level analyses).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wordorder.decode.options import DecodeOptions
from wordorder.errors import WordorderError
from wordorder.io import read_lines, refuse_clobbering, refuse_folders, write_parallel
from wordorder.text.subword import SubwordModel

log = logging.getLogger(__name__)


def run_translation(
    checkpoint: Path,
    spm: Path,
    sources: Sequence[Path],
    lang: str,
    options: DecodeOptions,
    threads: int | None,
    outputs: Sequence[Path],
    outputs_tok: Sequence[Path],
    features: Mapping[str, str] | None = None,
    spm_tgt: Path | None = None,
) -> list[dict]:
    """Translate each of ``sources`` into ``outputs[i]`` and ``outputs_tok[i]`` with the
    decoding ``options``, the model loaded once (the swap-noise analysis decodes every noise
    level of a test set with one model); all outputs appear together, or none. ``features``
    (name → path) are the extra source inputs the checkpoint's model needs, for one source only
    (tags are mapped with the checkpoint's vocabularies). ``spm`` is the joint subword model, or
    the source side's when ``spm_tgt`` is the target side's. Returns a summary per source."""
    import torch

    from wordorder.decode.static_beam import use_decode_graphs
    from wordorder.device import resolve_device
    from wordorder.model_io.checkpoint import load_model
    from wordorder.model_io.subwords import read_ids, subword_models
    from wordorder.text.tokenize import get_tokenizer

    check_file_counts(sources, outputs, outputs_tok, features)
    refuse_folders(*outputs, *outputs_tok)  # before the work, not at its end
    given: dict[str, str | Path] = {"--checkpoint": checkpoint, "--spm": spm}
    given |= _named("--input", sources)
    given |= {"--spm-tgt": spm_tgt} if spm_tgt else {}
    given |= {f"--features {name}": path for name, path in (features or {}).items()}
    refuse_clobbering(given, _named("--output", outputs) | _named("--output-tok", outputs_tok))
    if threads:
        torch.set_num_threads(threads)
    device = resolve_device(options.device)
    model, meta = load_model(checkpoint, device)
    graphs = use_decode_graphs(options.cuda_graphs, device, model)
    sp_src, sp = subword_models(spm, spm_tgt)  # sp: the target side's
    check_vocabularies(model, sp_src, sp, checkpoint)
    check_pieces(meta, sp_src, sp, checkpoint)
    read = []  # every source checked before the first is translated
    for source in sources:
        ids = read_ids(read_lines(source), sp_src, source)
        check_lengths(ids, options.max_source_len, source)
        read.append(
            (ids, read_decode_features(model.options, meta, features or {}, ids, checkpoint))
        )
    tokenizer = get_tokenizer(lang)
    summaries, columns = [], []
    for source, (ids, feats) in zip(sources, read):
        tokens, summary = translate_ids(model, ids, feats, sp, options, device, graphs)
        columns += [[tokenizer.detokenize(t) for t in tokens], [" ".join(t) for t in tokens]]
        summaries.append({"source": str(source), **summary})
    paths = [path for pair in zip(outputs, outputs_tok) for path in pair]
    write_parallel(paths, columns)
    return summaries


def _named(option: str, paths: Sequence[Path]) -> dict[str, Path]:
    """Option name (numbered where there are several) → path, for error messages."""
    if len(paths) == 1:
        return {option: paths[0]}
    return {f"{option} {i}": path for i, path in enumerate(paths, start=1)}


def translate_ids(
    model: Any,
    sources: list[list[int]],
    feats: dict | None,
    sp: SubwordModel,
    options: DecodeOptions,
    device: Any,
    graphs: bool,
) -> tuple[list[list[str]], dict]:
    """The target pieces (``sp``'s) of each source sentence (ids), and a summary."""
    import time

    from wordorder.decode.batches import translate_batches

    reset_vision_span(model)  # the summary's span is this source's, not the sum of all so far
    start = time.perf_counter()
    hyps = translate_batches(
        model,
        sources,
        batch_tokens=options.batch_tokens,
        device=device,
        beam_size=options.beam_size,
        max_len_a=options.max_len_a,
        max_len_b=options.max_len_b,
        length_penalty=options.length_penalty,
        feats=feats,
        cuda_graphs=graphs,
    )
    seconds = time.perf_counter() - start
    summary = {
        "sentences": len(sources),
        "seconds": round(seconds, 2),
        "sentences_per_s": round(len(sources) / max(seconds, 1e-9), 2),
        "device": str(device),
        "cuda_graphs": graphs,
    }
    summary.update(vision_span(model))
    return [sp.decode_ids(h) for h in hyps], summary


def check_file_counts(
    sources: Sequence[Path],
    outputs: Sequence[Path],
    outputs_tok: Sequence[Path],
    features: Mapping[str, str] | None,
) -> None:
    """One --output and one --output-tok per --input; --features only with one --input (they
    are line-aligned with it)."""
    if not sources or not len(sources) == len(outputs) == len(outputs_tok):
        raise WordorderError(
            f"{len(sources)} --input, {len(outputs)} --output and {len(outputs_tok)} "
            "--output-tok files",
            hint="give one --output and one --output-tok per --input, in the same order",
        )
    if features and len(sources) > 1:
        raise WordorderError(
            f"--features with {len(sources)} --input files: the features are line-aligned with "
            "one source",
            hint="translate a source with features on its own",
        )


def check_vocabularies(
    model: Any, sp_src: SubwordModel, sp_tgt: SubwordModel, checkpoint: Path
) -> None:
    """The subword models must be the ones the checkpoint was trained with (as far as their
    sizes tell): ids of another vocabulary would give fluent nonsense, not an error."""
    want = (int(model.vocab_size), int(getattr(model, "tgt_vocab_size", model.vocab_size)))
    have = (sp_src.vocab_size, sp_tgt.vocab_size)
    if want != have:
        raise WordorderError(
            f"the checkpoint's vocabularies have {want[0]} (source) and {want[1]} (target) "
            f"entries, the subword models {have[0]} and {have[1]}",
            path=checkpoint,
            hint="give the subword model(s) the model was trained with (--spm, and --spm-tgt when "
            "each side has its own)",
        )


def check_pieces(
    meta: Mapping[str, Any], sp_src: SubwordModel, sp_tgt: SubwordModel, checkpoint: Path
) -> None:
    """The subword models must have the pieces the checkpoint was trained with (its meta keeps
    their digests; older checkpoints have none): another experiment's model of the same size
    passes the size check and would decode fluent nonsense."""
    from wordorder.model_io.subwords import vocab_digest

    for key, sp, side in (("spm_vocab", sp_src, "--spm"), ("spm_tgt_vocab", sp_tgt, "--spm-tgt")):
        want = meta.get(key)
        if key == "spm_tgt_vocab" and sp_tgt is sp_src:
            continue
        if want is None:  # an older checkpoint: the subword model it names, where it still is
            recorded = meta.get(key.replace("_vocab", ""))
            if not recorded or not Path(recorded).is_file():
                log.warning(
                    "%s keeps no digest of its subword model and the one it names (%s) is gone: "
                    "%s %s cannot be checked against it",
                    checkpoint,
                    recorded or "none",
                    side,
                    sp.path,
                )
                continue
            want = vocab_digest(SubwordModel(Path(recorded)))
        if vocab_digest(sp) != want:
            raise WordorderError(
                f"the subword model {sp.path} ({side}) has other pieces than the one the "
                f"checkpoint was trained with ({meta.get(key.replace('_vocab', ''))})",
                path=checkpoint,
                hint="give the subword model(s) of the checkpoint's own experiment and pair",
            )


def check_lengths(sources: list[list[int]], cap: int, path: Path) -> None:
    """No source line longer than ``decode.max_source_len`` subwords: the beam search runs up
    to max_len_a times as many steps, each over the whole source (a 9,999-piece line took 221 s
    alone); such a line is a file without line breaks, not a sentence."""
    for number, ids in enumerate(sources, start=1):
        if len(ids) > cap:
            raise WordorderError(
                f"the line has {len(ids):,} subwords, more than decode.max_source_len ({cap:,})",
                path=path,
                line=number,
                hint="split the line into sentences, or raise decode.max_source_len",
            )


def vision_span(model: Any) -> dict:
    """Flexible attention's average vision span over the decoding just done (Shu & Nakayama
    2017 report how many positions are scored): the fraction of real source positions scored
    per step. Empty for models without flexible attention."""
    scored = total = 0
    for module in model.modules():
        span = getattr(module, "span", None)
        if isinstance(span, list) and len(span) == 2:
            scored, total = scored + span[0], total + span[1]
    if not total:
        return {}
    return {"flexible_scored_fraction": round(scored / total, 4)}


def reset_vision_span(model: Any) -> None:
    """Start flexible attention's counts of scored positions (:func:`vision_span`) anew."""
    for module in model.modules():
        span = getattr(module, "span", None)
        if isinstance(span, list) and len(span) == 2:
            span[:] = [0, 0]


def read_decode_features(
    model_options: Any,
    meta: Mapping[str, Any],
    files: Mapping[str, str],
    sources: list[list[int]],
    checkpoint: Path,
) -> dict | None:
    """The source features a checkpoint's model needs, read with its tag vocabularies."""
    from wordorder.model_io.features import FeatureVocab, check_feature_files, load_features

    needed = model_options.required_features()
    check_feature_files(needed, files, checkpoint)
    if not needed:
        return None
    vocabs = {
        name: FeatureVocab.from_itos(itos)
        for name, itos in (meta.get("feature_vocabs") or {}).items()
    }
    feats, _ = load_features(dict(files), sources, vocabs)
    return feats
