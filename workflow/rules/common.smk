# The helpers of the rules: the pairs, splits and variants of the config, the params functions
# of each stage (JSON options, CLI arguments, titles; in the order of the rule files) and the
# final targets, all_targets(). Where files are, and the input functions: paths.smk.
import json
from types import SimpleNamespace

from wordorder.config import (
    check_config,
    clean_options,
    apply_presets,
    load_variants,
    variant_model,
)
from wordorder.corpus.pairdata import (
    extra_ref_file,
    is_holdout,
    pair_langs,
    source_files,
    split_names,
    split_extra_refs,
    split_spec,
)
from wordorder.resources import gpus, mem_mb
from wordorder import ledger, seeds as variant_seeds

VARIANTS = apply_presets(load_variants(config["variants_file"]), config["presets"])
check_config(config, VARIANTS, CONFIG_FILES)

PREORDER = config["preorder"]
METHODS = PREORDER["methods"]
SWAP = config["evaluation"]["swap_noise"]


def as_json(value):
    """Options travel to the CLI as one JSON argument (a change of them reruns the rule)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --- pairs, splits and variants


def src_lang(w):
    return pair_langs(w.pair)[0]


def tgt_lang(w):
    return pair_langs(w.pair)[1]


def testsets(pair):
    return list(config["data"][pair]["test"])


def fetched_corpora(pair):
    """Splits with a source of their own (holdouts are cut from the training corpus)."""
    data = config["data"][pair]
    return [s for s in split_names(data) if not is_holdout(split_spec(data, s))]


def corpus_of(w):
    spec = split_spec(config["data"][w.pair], w.split)
    return "train" if is_holdout(spec) else w.split


def source_splits(pair):
    """Every split whose source side is parsed: train, dev and the test sets."""
    return ["train", "dev", *testsets(pair)]


def source_splits_of(w):
    return source_splits(w.pair)


def seeds_of(variant):
    """The variant's training seeds: its seeds_by_variant entry, else seeds."""
    return variant_seeds.seeds_of(config, variant)


def runs():
    """Every (pair, variant, seed) to train."""
    return [
        dict(pair=p, variant=v, seed=s)
        for p in config["pairs"]
        for v in config["variants"]
        for s in seeds_of(v)
    ]


def baseline_variant():
    """The variant the others are tested against (evaluation.baseline, else the first)."""
    return config["evaluation"]["baseline"] or config["variants"][0]


def variant_entry(w):
    return VARIANTS[w.variant]


def model_options(w):
    """The variant's model options on the pair (registry, config model, data.<pair>.model)."""
    return variant_model(config, VARIANTS, w.variant, w.pair)


def variant_features(w, split):
    """The extra source inputs of a variant for one split: {name: file} (POS/BIEO tags of the
    syntax stage, preordered positions of the variant's preordering method)."""
    from wordorder.models.registry import resolve_options

    entry = variant_entry(w)
    src = src_lang(w)
    files = {}
    # with the preset's sizes, as training builds them (input_groups share out its heads)
    for name in sorted(resolve_options(model_options(w)).required_features()):
        if name == "order":
            method = entry["preorder"]
            files[name] = PREORDERED.format(
                pair=w.pair, method=method, split=split, kind="positions", lang=src
            )
        else:
            files[name] = data_file(w, split, name, "src")
    return files


def subword_only_variants(pair):
    """Variants whose only input is the original source subwords: a swapped source (swap noise)
    or a gold-alignment sentence (attention AER) is all they need; tags or preorder positions
    would have to be re-derived for such sentences."""
    out = []
    for v in config["variants"]:
        w = SimpleNamespace(pair=pair, variant=v)
        if variant_entry(w).get("source", "original") == "original" and not variant_features(
            w, "test"
        ):
            out.append(v)
    return out


def align_gold(pair):
    return config["data"][pair].get("align_gold")


def aer_pairs():
    return [p for p in config["pairs"] if align_gold(p)]


def transformer_variants():
    return [
        v
        for v in config["variants"]
        if VARIANTS[v]["model"].get("family", "transformer") == "transformer"
    ]


# --- params functions


# corpus


def fetch_spec(w):
    return as_json(split_spec(config["data"][w.pair], w.corpus))


def pair_data(w):
    return as_json(config["data"][w.pair])


def pair_clean_options(w):
    return as_json(clean_options(config, w.pair))


def testset_spec(w):
    return as_json(config["data"][w.pair]["test"][w.testset])


# subwords


def subword_options():
    """The sentencepiece options (``joint`` decides which rule runs, not how a model trains)."""
    return as_json({k: v for k, v in config["subword"].items() if k != "joint"})


def spm_tgt_arg(w):
    """The CLI arguments naming the target side's model: none for a joint model (a list, so that
    the shell command quotes each word: {params.spm_tgt:q})."""
    models = spm_inputs(w)
    return ["--spm-tgt", models["spm_tgt"]] if models["spm_tgt"] != models["spm"] else []


# alignment and preordering


def align_gold_args(w, input):
    """The gold set's CLI arguments, a list (one shell word each, quoted by {params.gold:q})."""
    gold = align_gold(w.pair)
    if not gold:
        return []
    swap = ["--gold-swap"] if gold.get("swap") else []
    return ["--gold-pairs", input.gold[0], "--gold-links", input.gold[1], *swap]


def preorderer_options(method):
    """The training options of a learned preorderer as JSON, with the split seed. cross_fit is
    the rules' business and stays out: the options, and so the outputs, of cross_fit 1 are those
    of before the option existed."""
    options = {k: v for k, v in PREORDER[method].items() if k != "cross_fit"}
    return as_json({**options, "seed": config["split_seed"]})


# training


def model_json(w):
    return as_json(model_options(w))


def train_features_json(w):
    train = variant_features(w, "train")
    dev = variant_features(w, "dev")
    return as_json({name: {"train": train[name], "dev": dev[name]} for name in train})


def train_launcher():
    """One process, or torchrun starting train_processes DDP processes (one per GPU).
    A list: the shell command quotes each word."""
    n = config["train_processes"]
    return (
        ["torchrun", "--standalone", "--nproc_per_node", str(n), "-m", "wordorder.cli"]
        if n > 1
        else ["wordorder"]
    )


# evaluation


def test_features_json(w):
    return as_json(variant_features(w, w.testset))


def reference_args(w, input):
    """--extra-ref per further reference, --lowercase where the pair is scored
    case-insensitively, and --bleu-brevity shortest where the config asks for mteval's rule."""
    args = [a for path in input.extra_refs for a in ("--extra-ref", path)]
    if config["evaluation"]["bleu_brevity"] != "closest":
        args += ["--bleu-brevity", config["evaluation"]["bleu_brevity"]]
    return args + (["--lowercase"] if w.pair in config["evaluation"]["case_insensitive"] else [])


def length_hyp_args(w, input):
    return [f"{v}={h}" for v, h in zip(config["variants"], input.hyps)]


def length_tau_args(w, input):
    if not METHODS:
        return []
    return [
        "--align",
        input.align[0],
        "--perms",
        *(f"{m}={p}" for m, p in zip(METHODS, input.perms)),
    ]


def length_title(w):
    firsts = {seeds_of(v)[0] for v in config["variants"]}
    run = f"seed {firsts.pop()}" if len(firsts) == 1 else "each system's first seed"
    return f"{config['experiment']} {w.pair} {w.testset}: BLEU by source length ({run})"


def systems_json():
    return as_json({"runs": _system_runs()})


def gold_swap_arg(w):
    return ["--gold-swap"] if align_gold(w.pair).get("swap") else []


def head_similarity_title(w):
    return f"{config['experiment']} {w.pair} {w.testset}: head similarity between feature groups"


# swap noise (Chen et al. 2019, Figs 3-5)


def swap_noise_hyp_args(w):
    return [f"{v}:{p}={hyp}" for v, p, hyp in _swap_runs(w)]


def swap_noise_title(w):
    return f"{config['experiment']} {w.pair} {w.testset}: BLEU under swap noise"


# findings: each paper's claimed BLEU difference (evaluation.findings) against ours


def findings_claims():
    """The claims this run can answer: pair, system and baseline all in the run."""
    return [
        c
        for c in config["evaluation"]["findings"]
        if c["pair"] in config["pairs"] and {c["system"], c["baseline"]} <= set(config["variants"])
    ]


def findings_spec(wildcards=None):
    def hyps(c, variant):
        return [
            HYP.format(pair=c["pair"], variant=variant, seed=s, testset=c["testset"])
            for s in seeds_of(variant)
        ]

    claims = []
    for c in findings_claims():
        w = SimpleNamespace(pair=c["pair"], testset=c["testset"])
        claims.append(
            {
                **c,
                "lang": tgt_lang(w),
                "lowercase": c["pair"] in config["evaluation"]["case_insensitive"],
                "brevity": config["evaluation"]["bleu_brevity"],
                "system_hyps": hyps(c, c["system"]),
                "baseline_hyps": hyps(c, c["baseline"]),
                "system_seeds": seeds_of(c["system"]),
                "baseline_seeds": seeds_of(c["baseline"]),
                "refs": [test_reference(w), *extra_refs(w)],
                # a length subset (min_source_words) is judged on the tokenized source's words
                **({"source": test_source_tok(w)} if c.get("min_source_words") else {}),
            }
        )
    return as_json({"title": f"{config['experiment']}: the papers' effects", "claims": claims})


def convergence_json():
    return as_json({"runs": convergence_runs()})


# the run ledger (workflow/rules/ledger.smk)

LEDGER = config["ledger"]
LEDGERED = ledger.ledgered_runs(LEDGER)


def in_ledger(w):
    return ledger.run_name(w.pair, w.variant, w.seed) in LEDGERED


def ledger_no_model(w):
    return ledger.no_checkpoint(ledger.run_name(w.pair, w.variant, w.seed), LEDGER)


def ledger_record(w):
    # Missing for a run the ledger lacks: Snakemake then takes train / translate instead.
    return f"{LEDGER}/runs/{ledger.run_name(w.pair, w.variant, w.seed)}/record.json"


def ledger_config_json(w):
    return as_json(ledger.run_settings(config, model_options(w), int(w.seed)))


def ledger_test_files(w, testset):
    t = SimpleNamespace(pair=w.pair, variant=w.variant, seed=w.seed, testset=testset)
    out = dict(hyp=HYP, tok=HYP_TOK, benchmark=TRANSLATE_BENCHMARK)
    return {k: v.format(**vars(t)) for k, v in out.items()} | dict(
        src=test_source(t), features=test_features(t), ref=[test_reference(t), *extra_refs(t)]
    )


def ledger_perms(w):
    # the permutations behind a variant's preorder positions (eflomal's alignments differ
    # from run to run, so the ledger keeps them: another machine projects the same positions)
    method, splits = variant_entry(w).get("preorder"), ["train", "dev", *testsets(w.pair)]
    return [PERM.format(pair=w.pair, method=method, split=s) for s in splits] if method else []


def ledger_add_inputs(w):
    tests = [ledger_test_files(w, t) for t in testsets(w.pair)]
    train = train_inputs(w) | {"perm": ledger_perms(w)}
    return ledger.ledger_inputs(METRICS.format(**w), train, tests)


def ledger_restorable(key):
    # a file made beside others (by select, subword_train) is rebuilt, not restored, since two
    # jobs would write it
    producers = [r for r in workflow.rules if r.is_producer(f"{R}/{key}")]
    return all(len(r.output) == 1 for r in producers)


def ledger_spec_json(w, input):
    named = dict(input.items())
    args = (w.pair, w.variant, w.seed, named, testsets(w.pair), L, config["threads"])
    return as_json(ledger.ledger_spec(*args))


def ledger_targets():
    todo = [r for r in runs() if ledger.run_name(**r) not in LEDGERED]
    return [LEDGER_MARK.format(**r) for r in todo] if LEDGER else []


# --- the final targets (rule all)


def preorder_targets():
    """The quality table of every pair and the model inputs of every (method, split)."""
    if not METHODS:
        return []
    out = []
    for pair in config["pairs"]:
        src = pair_langs(pair)[0]
        out.append(PREORDER_MD.format(pair=pair))
        for m in METHODS:
            for s in source_splits(pair):
                for kind in ("tok", "bpe", "positions"):
                    out.append(PREORDERED.format(pair=pair, method=m, split=s, kind=kind, lang=src))
    return out


def all_targets():
    """Every table and figure the config asks for."""
    pairs = config["pairs"]
    evaluation = config["evaluation"]
    per_testset = [dict(pair=p, testset=t) for p in pairs for t in testsets(p)]
    targets = [
        BLEU_CSV,
        BLEU_MD,
        GENERATION_CSV,
        GENERATION_MD,
        NGRAM_CSV,
        NGRAM_MD,
        SYSTEMS_CSV,
        SYSTEMS_MD,
        CURVES,
    ]
    targets += [LENGTH_FIGURE.format(**x) for x in per_testset]
    if config["syntax"]["parse"]:
        targets += [SYNTAX_JSON.format(pair=p) for p in pairs]
    targets += preorder_targets()
    if SWAP["percents"]:
        targets += [SWAP_FIGURE.format(**x) for x in per_testset]
    if aer_pairs():
        targets.append(AER_MD)
    if evaluation["head_similarity"] and transformer_variants():
        targets += [HEAD_SIMILARITY_MD.format(**x) for x in per_testset]
    effects = [FINDINGS_MD, FINDINGS_JSON] if findings_claims() else []
    if evaluation["cross_paper"]:
        effects += [CROSS_PAPER_MD, CROSS_PAPER_CSV]
    if effects:
        effects += [CONVERGENCE_MD, CONVERGENCE_FIGURE]
    if evaluation["readme"] or evaluation["readme_page"]:
        effects.append(README_SECTION)
    return targets + effects + ledger_targets()
