"""The ``wordorder`` command line: one subcommand per pipeline step, called by the rules.

Each subcommand parses its arguments and calls the package; heavy modules (torch) are
imported only by the subcommands that need them, so small steps start fast. Input problems
are reported as one ``error:`` line with a hint, exit status 2, and no partial outputs.
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from wordorder.errors import WordorderError


def _json(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def cmd_check_config(a: argparse.Namespace) -> None:
    from wordorder.config import load_config

    config = load_config(a.config)
    print(f"{a.config}: valid; experiment {config['experiment']}, pairs {', '.join(config['pairs'])}, "
          f"{len(config['variants'])} variants, seeds {config['seeds']}")


def cmd_fetch(a: argparse.Namespace) -> None:
    from wordorder.corpus.pairdata import pair_langs
    from wordorder.corpus.sources import fetch_source
    from wordorder.temps import remove_legacy_fetch_dirs

    src, tgt = pair_langs(a.pair)
    if a.lang not in (src, tgt):
        raise WordorderError(f"language '{a.lang}' is not part of the pair {a.pair}")
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_legacy_fetch_dirs(out.parent, time.time())
    # Both sides are read (to check that they line up); only this job's side is written.
    n = fetch_source(a.spec, src, tgt, out if a.lang == src else None, out if a.lang == tgt else None,
                     Path(a.cache))
    print(f"{out}: {n} lines")


def cmd_tokenize(a: argparse.Namespace) -> None:
    from wordorder.text.tokenize import tokenize_file

    n = tokenize_file(Path(a.input), Path(a.output), a.lang)
    print(f"{a.output}: {n} lines")


def cmd_split(a: argparse.Namespace) -> None:
    from wordorder.corpus.runner import make_splits, write_splits

    table = make_splits(a.pair, a.data, a.clean, a.seed, Path(a.tok_dir))
    write_splits(table, Path(a.output))
    print(json.dumps({"clean": table["clean"], "overlap": table["overlap"], "sizes": table["sizes"]}, indent=1))


def cmd_reference(a: argparse.Namespace) -> None:
    from wordorder.corpus.pairdata import pair_langs
    from wordorder.corpus.references import prepare_reference

    n = prepare_reference(a.spec, a.index - 1, *pair_langs(a.pair), Path(a.first), Path(a.output))
    print(f"{a.output}: {n} lines")


def cmd_select(a: argparse.Namespace) -> None:
    from wordorder.corpus.runner import select_split

    n = select_split(Path(a.splits), a.split, Path(a.raw), Path(a.tok), Path(a.out_raw), Path(a.out_tok))
    print(f"{a.out_raw}: {n} lines")


def cmd_subword_train(a: argparse.Namespace) -> None:
    from wordorder.text.subword import train_sentencepiece

    model = Path(a.model)
    if model.suffix != ".model":
        raise WordorderError("the subword model path must end in .model", path=model)
    opts = dict(a.options)
    train_sentencepiece([Path(p) for p in a.inputs], model.with_suffix(""), seed=a.seed, **opts)
    print(f"{model}: trained")


def cmd_subword_encode(a: argparse.Namespace) -> None:
    from wordorder.text.subword import SubwordModel, encode_file

    n = encode_file(Path(a.input), Path(a.output), SubwordModel(Path(a.model)))
    print(f"{a.output}: {n} lines")


def cmd_train(a: argparse.Namespace) -> None:
    from wordorder.train.runner import run_training

    summary = run_training(
        train_src=Path(a.train_src), train_tgt=Path(a.train_tgt), dev_src=Path(a.dev_src),
        dev_ref=Path(a.dev_ref), spm=Path(a.spm), model_options=a.model_options,
        train_options=a.train_options, seed=a.seed, threads=a.threads, output=Path(a.output),
        features=a.features, state=Path(a.state) if a.state else None,
        spm_tgt=Path(a.spm_tgt) if a.spm_tgt else None,
    )
    print(json.dumps(summary, indent=1))


def cmd_average_checkpoints(a: argparse.Namespace) -> None:
    import torch

    from wordorder.model_io.checkpoint import average_checkpoints, save_checkpoint
    from wordorder.model_io.checkpoint import load_model

    model, meta = load_model(a.inputs[-1])
    model.load_state_dict(average_checkpoints(a.inputs))
    options = meta.pop("options")
    meta.pop("vocab_size")
    meta.pop("tgt_vocab_size")
    save_checkpoint(a.output, model, options, {**meta, "averaged": [str(p) for p in a.inputs]})
    print(f"{a.output}: the mean of {len(a.inputs)} checkpoints ({sum(p.numel() for p in model.parameters()):,} "
          f"parameters, torch {torch.__version__})")


def cmd_translate(a: argparse.Namespace) -> None:
    from wordorder.decode.options import DecodeOptions
    from wordorder.decode.runner import run_translation

    summary = run_translation(
        checkpoint=Path(a.checkpoint), spm=Path(a.spm), source=Path(a.input), lang=a.lang,
        options=DecodeOptions.from_dict(a.options), threads=a.threads, output=Path(a.output), output_tok=Path(a.output_tok),
        features=a.features, spm_tgt=Path(a.spm_tgt) if a.spm_tgt else None,
    )
    print(json.dumps(summary, indent=1))


def cmd_score(a: argparse.Namespace) -> None:
    from wordorder.corpus.references import read_references
    from wordorder.evaluate.scores import score_translations, write_scores
    from wordorder.io import read_parallel
    from wordorder.text.tokenize import get_tokenizer

    hyps, refs = read_parallel(a.hyp, a.ref)
    hyps_tok, refs_tok = read_parallel(a.hyp_tok, a.ref_tok) if a.hyp_tok else (None, None)
    extra = read_references(a.extra_ref, len(refs))
    extra_tok = []
    if extra and hyps_tok is not None:  # the extra references in the pipeline's own tokenization
        tokenizer = get_tokenizer(a.lang)
        extra_tok = [[" ".join(tokenizer.tokenize(line)) for line in r] for r in extra]
    scores = score_translations(hyps, refs, a.lang, hyps_tok=hyps_tok, refs_tok=refs_tok, extra_refs=extra,
                                extra_refs_tok=extra_tok, lowercase=a.lowercase)
    meta = {"pair": a.pair, "variant": a.variant, "seed": a.seed, "testset": a.testset,
            "hyp": a.hyp, "ref": a.ref, "extra_refs": a.extra_ref, "lowercase": a.lowercase}
    write_scores(Path(a.output), scores, meta)
    print(f"{a.output}: BLEU {scores['bleu']:.2f} chrF {scores['chrf']:.2f}")


def cmd_report(a: argparse.Namespace) -> None:
    from wordorder.evaluate.plots import plot_training_curves
    from wordorder.evaluate.tables import (
        collect_scores,
        collect_significance,
        results_table,
        significance_markers,
        write_table,
    )

    df = collect_scores([Path(p) for p in a.scores])
    word_order = "ribes" in df.columns and df["ribes"].notna().all()
    metrics = ("bleu", "ribes", "chrf") if word_order else ("bleu", "chrf")
    markers, note = {}, ""
    if a.significance:
        markers = significance_markers(collect_significance([Path(p) for p in a.significance]), a.test)
        test = "paired bootstrap (sacreBLEU)" if a.test == "bootstrap" else "sign test (Collins et al. 2005)"
        note = (f"BLEU +/++: better than {a.baseline} at p < 0.05 / 0.01, −/−−: worse, {test}; "
                "with several seeds the largest p of the seeds.")
    write_table(results_table(df, metrics=metrics, variants=a.variants), Path(a.csv), Path(a.md),
                title=a.title, markers=markers, marker_note=note, tex_path=Path(a.tex) if a.tex else None)
    experiment = a.title.split(":")[0]
    if word_order and a.generation_md:
        gen = results_table(df, metrics=("under_generation", "over_generation", "ter_tok"), variants=a.variants)
        write_table(gen, Path(a.generation_csv), Path(a.generation_md),
                    title=f"{experiment}: under- and over-generation (TER insertions / deletions per sentence)")
    if a.ngram_md:  # Kawara 2021 Table VI, Chen 2020 Fig 5: BLEU's modified n-gram precisions
        for n in range(4):
            df[f"p{n + 1}"] = [float(p[n]) for p in df["bleu_detail.precisions"]]
        write_table(results_table(df, metrics=("p1", "p2", "p3", "p4"), variants=a.variants),
                    Path(a.ngram_csv), Path(a.ngram_md), title=f"{experiment}: n-gram precisions of BLEU (%)")
    logs = {" ".join(Path(m).parts[-4:-1]): Path(m) for m in a.metrics}
    plot_training_curves(logs, Path(a.curves))
    print(Path(a.md).read_text(encoding="utf-8"))


def cmd_parse(a: argparse.Namespace) -> None:
    from wordorder.syntax.parse import parse_file, parse_scatter_item

    stats = parse_file(a.input, a.output, a.lang, a.parsers, parse_scatter_item(a.shard), a.batch_size)
    print(json.dumps(stats.to_json()))


def cmd_parse_gather(a: argparse.Namespace) -> None:
    from wordorder.syntax.parse import gather

    print(json.dumps(gather(a.shards, a.tokenized, a.output, a.summary)))


def cmd_syntax_project(a: argparse.Namespace) -> None:
    from wordorder.syntax.project import project_file

    print(json.dumps(project_file(a.conllu, a.bpe, a.out_pos, a.out_bieo, a.out_heads, a.out_tree, a.out_dep,
                                  a.out_word, a.out_head)))


def cmd_syntax_report(a: argparse.Namespace) -> None:
    from wordorder.syntax.report import syntax_report

    if len(a.splits) != len(a.conllu) or len(a.splits) != len(a.summaries):
        raise WordorderError("--splits, --conllu and --summaries need one value per split each")
    report = syntax_report(a.pair, a.lang, dict(zip(a.splits, a.conllu)), dict(zip(a.splits, a.summaries)),
                           Path(a.json), Path(a.figure))
    print(json.dumps({k: {x: v[x] for x in ("sentences", "fallback_share", "nonprojective_share")}
                      for k, v in report["splits"].items()}))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wordorder", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, func, help):
        s = sub.add_parser(name, help=help)
        s.set_defaults(func=func)
        return s

    s = add("check-config", cmd_check_config, "validate a config (schema, pairs, variants, parsers) as the DAG does")
    s.add_argument("--config", required=True)

    s = add("fetch", cmd_fetch, "materialise one side of a corpus source")
    s.add_argument("--spec", type=_json, required=True, help="the source as JSON (kind + keys)")
    s.add_argument("--pair", required=True)
    s.add_argument("--lang", required=True)
    s.add_argument("--cache", required=True, help="download cache folder")
    s.add_argument("--output", required=True)

    s = add("tokenize", cmd_tokenize, "tokenize a file (line-preserving)")
    s.add_argument("--lang", required=True)
    s.add_argument("--input", required=True)
    s.add_argument("--output", required=True)

    s = add("split", cmd_split, "clean the training corpus and decide the splits")
    s.add_argument("--pair", required=True)
    s.add_argument("--data", type=_json, required=True, help="the pair's data block as JSON")
    s.add_argument("--clean", type=_json, required=True)
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--tok-dir", required=True)
    s.add_argument("--output", required=True)

    s = add("select", cmd_select, "write one split of one language")
    for name in ("--splits", "--split", "--raw", "--tok", "--out-raw", "--out-tok"):
        s.add_argument(name, required=True)

    s = add("reference", cmd_reference, "check and write a test set's further reference (extra_refs)")
    s.add_argument("--spec", type=_json, required=True, help="the test set's config entry (JSON)")
    for name in ("--pair", "--first", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--index", type=int, required=True, help="1 = the first extra reference")

    s = add("subword-train", cmd_subword_train, "train a sentencepiece model (joint: on both sides' inputs)")
    s.add_argument("--inputs", nargs="+", required=True)
    s.add_argument("--options", type=_json, default={})
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--model", required=True, help="output path ending in .model")

    s = add("subword-encode", cmd_subword_encode, "split tokenized text into subwords")
    for name in ("--model", "--input", "--output"):
        s.add_argument(name, required=True)

    s = add("train", cmd_train, "train one model")
    for name in ("--train-src", "--train-tgt", "--dev-src", "--dev-ref", "--spm", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--model-options", type=_json, required=True)
    s.add_argument("--train-options", type=_json, default={})
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--threads", type=int, default=None)
    s.add_argument("--features", type=_json, default={},
                   help='extra source inputs: {"pos": {"train": PATH, "dev": PATH}, "order": {...}}')
    s.add_argument("--state", default=None, help="resumable training state (saved every train.checkpoint_every "
                   "updates and on SIGTERM; a rerun continues from it)")
    s.add_argument("--spm-tgt", default=None, help="the target side's subword model when each side has its own "
                   "(--spm is then the source side's)")

    s = add("average-checkpoints", cmd_average_checkpoints, "average the weights of checkpoints of one model")
    s.add_argument("--inputs", nargs="+", required=True)
    s.add_argument("--output", required=True)

    s = add("translate", cmd_translate, "translate a subword-encoded source file")
    for name in ("--checkpoint", "--spm", "--input", "--lang", "--output", "--output-tok"):
        s.add_argument(name, required=True)
    s.add_argument("--options", type=_json, default={})
    s.add_argument("--threads", type=int, default=None)
    s.add_argument("--features", type=_json, default={}, help='extra source inputs: {"pos": PATH, ...}')
    s.add_argument("--spm-tgt", default=None, help="the target side's subword model when each side has its own "
                   "(--spm is then the source side's)")

    s = add("score", cmd_score, "score translations (BLEU, chrF) into a JSON")
    for name in ("--hyp", "--ref", "--lang", "--output", "--pair", "--variant", "--testset"):
        s.add_argument(name, required=True)
    s.add_argument("--hyp-tok")
    s.add_argument("--ref-tok")
    s.add_argument("--extra-ref", action="append", default=[], metavar="PATH",
                   help="a further reference, line-aligned with --ref (repeat for each; NIST sets have four)")
    s.add_argument("--lowercase", action="store_true", help="case-insensitive BLEU and chrF (sacreBLEU -lc)")
    s.add_argument("--seed", type=int, required=True)

    s = add("report", cmd_report, "gather score JSONs into tables and figures")
    s.add_argument("--scores", nargs="+", required=True)
    s.add_argument("--metrics", nargs="+", required=True)
    s.add_argument("--variants", nargs="+", required=True)
    s.add_argument("--title", required=True)
    for name in ("--csv", "--md", "--curves"):
        s.add_argument(name, required=True)
    s.add_argument("--significance", nargs="*", default=[])
    s.add_argument("--test", choices=["bootstrap", "sign"], default="bootstrap")
    s.add_argument("--baseline", default="the baseline")
    s.add_argument("--generation-csv")
    s.add_argument("--generation-md")
    s.add_argument("--tex", help="also the results table as LaTeX")
    s.add_argument("--ngram-csv")
    s.add_argument("--ngram-md")
    s = add("parse", cmd_parse, "parse one shard of a tokenized file into CoNLL-U")
    for name in ("--lang", "--input", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--shard", default="1-of-1", help="K-of-N (Snakemake's scatter item)")
    s.add_argument("--parsers", type=_json, default={}, help="syntax.parsers of the config as JSON")
    s.add_argument("--batch-size", type=int, default=256)

    s = add("parse-gather", cmd_parse_gather, "concatenate parse shards, checked against the input")
    s.add_argument("--shards", nargs="+", required=True)
    for name in ("--tokenized", "--output", "--summary"):
        s.add_argument(name, required=True)

    s = add("syntax-project", cmd_syntax_project, "POS/BIEO/dependency labels per subword, heads and binary trees")
    for name in ("--conllu", "--bpe", "--out-pos", "--out-bieo", "--out-heads", "--out-tree"):
        s.add_argument(name, required=True)
    s.add_argument("--out-dep", default=None, help="dependency label of each subword's word")
    s.add_argument("--out-word", default=None, help="word index of each subword (model input 'word')")
    s.add_argument("--out-head", default=None, help="head of each subword's word (model input 'head')")

    s = add("syntax-report", cmd_syntax_report, "parse statistics, masks and a figure for one pair")
    for name in ("--pair", "--lang", "--json", "--figure"):
        s.add_argument(name, required=True)
    for name in ("--splits", "--conllu", "--summaries"):
        s.add_argument(name, nargs="+", required=True)
    from wordorder.evaluate.commands import register as register_evaluate
    from wordorder.preorder.commands import register as register_preorder

    register_evaluate(add, _json)
    register_preorder(add, _json)
    return p


def peak_memory_mb() -> float:
    """Peak resident memory of this process or of the largest child it waited for (eflomal)."""
    import resource

    kib = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
              resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return kib / 1024  # Linux reports KiB


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of the children it waited for."""
    import resource

    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    try:
        args.func(args)
        # Every job's log ends with its time and peak memory (what to ask a cluster for).
        # The CPU time (this process and the children it waited for: eflomal) sums to the CPU-hours
        # of an experiment (wordorder.evaluate.cost).
        logging.getLogger("wordorder").info("%s finished in %.1f s; peak memory %.0f MB; cpu %.1f s", args.command,
                                            time.perf_counter() - start, peak_memory_mb(), cpu_seconds())
    except WordorderError as e:
        print(f"error: {e}", file=sys.stderr)
        from wordorder.train.resume import TrainingInterrupted

        return 143 if isinstance(e, TrainingInterrupted) else 2  # 128 + SIGTERM, as a killed job
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        # Outputs are written to temporary names and renamed: nothing partial is left behind.
        where = f" writing {e.filename}" if e.filename else ""
        print(f"error: the disk is full{where} ({e.strerror})\n  hint: free space, or point results:/logs: in the "
              "config at a larger disk, then rerun: finished steps are kept", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
