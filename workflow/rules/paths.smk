# Where every file of the experiment lives: the results and logs roots, the wildcard constraints,
# one template per result file, and the input functions, which fill the templates in for a job's
# wildcards. A path is written once, here. A template with a {kind} (or {method}) serves several
# files, and fill() names the kind for a rule's output. Logs and benchmarks stay beside their rule
# (no step reads them; the translate benchmark, read by the systems table, is the exception).
import re

R = f"{config['results']}/{config['experiment']}"  # results of this experiment
L = f"{config['logs']}/{config['experiment']}"  # logs of this experiment
DOWNLOADS = f"{config['results']}/downloads"  # shared by every experiment


def _one_of(names):
    return "|".join(re.escape(n) for n in names)


wildcard_constraints:
    pair=_one_of(config["pairs"]),
    variant=_one_of(config["variants"]),
    lang="[a-z]{2,3}",
    split="[A-Za-z0-9_]+",
    corpus="[A-Za-z0-9_]+",
    testset="[A-Za-z0-9_]+",
    seed=r"\d+",
    method="gold|btg|rvnn",
    fold=r"\d+",


scattergather:
    parse=config["syntax"]["shards"],


def fill(template, **values):
    """The template with these wildcards filled in and the others left to Snakemake:
    fill(PERM, method="gold") is "<R>/preorder/{pair}/gold/{split}.perm"."""
    return re.sub(r"\{(\w+)\}", lambda m: str(values.get(m[1], m[0])), template)


# --- templates

# Corpus: fetched and tokenized sources, the split plan, and the files of each split.
RAW = f"{R}/data/{{pair}}/raw/{{corpus}}.{{lang}}"
TOK_DIR = f"{R}/data/{{pair}}/tok"
TOKENIZED = f"{TOK_DIR}/{{corpus}}.{{lang}}"
SPLITS = f"{R}/data/{{pair}}/splits.json"
TEXT = f"{R}/data/{{pair}}/{{split}}.{{lang}}"  # untokenized (a test set's: the reference)
# kind: tok, bpe, or a syntax feature (pos, bieo, dep, heads, btree, word, head)
SPLIT_FILE = f"{R}/data/{{pair}}/{{split}}.{{kind}}.{{lang}}"
SPLIT_TOK = fill(SPLIT_FILE, kind="tok")
SPLIT_BPE = fill(SPLIT_FILE, kind="bpe")
EXTRA_REF = f"{R}/data/{{pair}}/refs/{{testset}}.{{n}}.{{lang}}"

# Syntax
PARSE_SHARD = f"{R}/data/{{pair}}/parse/{{split}}.{{lang}}.{{scatteritem}}.conllu"
PARSE_SHARD_STATS = f"{PARSE_SHARD}.json"
CONLLU = f"{R}/data/{{pair}}/{{split}}.{{lang}}.conllu"
PARSE_SUMMARY = f"{R}/data/{{pair}}/{{split}}.{{lang}}.parse.json"
SYNTAX_JSON = f"{R}/syntax/{{pair}}.json"
SYNTAX_FIGURE = f"{R}/figures/syntax_{{pair}}.png"

# Subwords: the joint model, or one per side (subword.joint: false)
SPM_MODEL = f"{R}/data/{{pair}}/spm.model"
SPM_VOCAB = f"{R}/data/{{pair}}/spm.vocab"
SPM_SIDE_MODEL = f"{R}/data/{{pair}}/spm.{{lang}}.model"
SPM_SIDE_VOCAB = f"{R}/data/{{pair}}/spm.{{lang}}.vocab"

# Alignment and preordering
ALIGN_JOINT = f"{R}/data/{{pair}}/align/joint.align"
ALIGN_STATS = f"{R}/data/{{pair}}/align/stats.json"
SPLIT_ALIGN = f"{R}/data/{{pair}}/{{split}}.align"
WORD_CLASSES = f"{R}/preorder/{{pair}}/classes.tsv"
BTG_MODEL = f"{R}/preorder/{{pair}}/btg/model.npz"
BTG_STATS = f"{R}/preorder/{{pair}}/btg/train.json"
RVNN_MODEL = f"{R}/preorder/{{pair}}/rvnn/model.pt"
RVNN_STATS = f"{R}/preorder/{{pair}}/rvnn/train.json"
# cross-fitting (preorder.<method>.cross_fit = K > 1): model k is trained without fold k
BTG_FOLD_MODEL = f"{R}/preorder/{{pair}}/btg/fold{{fold}}/model.npz"
BTG_FOLD_STATS = f"{R}/preorder/{{pair}}/btg/fold{{fold}}/train.json"
RVNN_FOLD_MODEL = f"{R}/preorder/{{pair}}/rvnn/fold{{fold}}/model.pt"
RVNN_FOLD_STATS = f"{R}/preorder/{{pair}}/rvnn/fold{{fold}}/train.json"
PERM = f"{R}/preorder/{{pair}}/{{method}}/{{split}}.perm"
# kind: tok, bpe, positions
PREORDERED = f"{R}/preorder/{{pair}}/{{method}}/{{split}}.{{kind}}.{{lang}}"
PREORDER_QUALITY = f"{R}/preorder/{{pair}}/quality.json"
PREORDER_CSV = f"{R}/tables/preorder_quality_{{pair}}.csv"
PREORDER_MD = f"{R}/tables/preorder_quality_{{pair}}.md"
PREORDER_FIGURE = f"{R}/figures/preorder_{{pair}}.png"

# Models: one per (pair, variant, seed)
MODEL = f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/best.pt"
METRICS = f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/metrics.jsonl"
TRAIN_STATE = f"{R}/resume/{{pair}}/{{variant}}/seed{{seed}}/state.pt"

# Evaluation
HYP = f"{R}/translations/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.hyp"
HYP_TOK = f"{HYP}.tok"
TRANSLATE_BENCHMARK = f"{R}/benchmarks/translate/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.tsv"
SCORE = f"{R}/scores/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.json"
BLEU_CSV = f"{R}/tables/bleu.csv"
BLEU_MD = f"{R}/tables/bleu.md"
BLEU_TEX = f"{R}/tables/bleu.tex"
GENERATION_CSV = f"{R}/tables/generation.csv"
GENERATION_MD = f"{R}/tables/generation.md"
NGRAM_CSV = f"{R}/tables/ngram_precision.csv"
NGRAM_MD = f"{R}/tables/ngram_precision.md"
CURVES = f"{R}/figures/training_curves.png"
SYSTEMS_CSV = f"{R}/tables/systems.csv"
SYSTEMS_MD = f"{R}/tables/systems.md"
LENGTH_CSV = f"{R}/tables/length_{{pair}}_{{testset}}.csv"
LENGTH_MD = f"{R}/tables/length_{{pair}}_{{testset}}.md"
LENGTH_FIGURE = f"{R}/figures/bleu_by_length_{{pair}}_{{testset}}.png"
AER_JSON = f"{R}/aer/{{pair}}/{{variant}}/seed{{seed}}.json"
AER_LINKS = f"{R}/aer/{{pair}}/{{variant}}/seed{{seed}}.align"
AER_CSV = f"{R}/tables/aer.csv"
AER_MD = f"{R}/tables/aer.md"
HEADS = f"{R}/heads/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.json"
HEAD_SIMILARITY_MD = f"{R}/tables/head_similarity_{{pair}}_{{testset}}.md"

# Swap noise
SWAP_PERM = f"{R}/noise/{{pair}}/swap{{percent}}/{{testset}}.perm"
SWAPPED = f"{R}/noise/{{pair}}/swap{{percent}}/{{testset}}.{{kind}}"  # kind: tok, bpe, positions
SWAP_HYP = f"{R}/noise/{{pair}}/swap{{percent}}/{{variant}}/seed{{seed}}/{{testset}}.hyp"
SWAP_HYP_TOK = f"{SWAP_HYP}.tok"
SWAP_CSV = f"{R}/tables/swap_noise_{{pair}}_{{testset}}.csv"
SWAP_MD = f"{R}/tables/swap_noise_{{pair}}_{{testset}}.md"
SWAP_FIGURE = f"{R}/figures/swap_noise_{{pair}}_{{testset}}.png"

# Findings
FINDINGS_MD = f"{R}/tables/findings.md"
FINDINGS_JSON = f"{R}/tables/findings.json"
CROSS_PAPER_CSV = f"{R}/tables/cross_paper.csv"
CROSS_PAPER_MD = f"{R}/tables/cross_paper.md"
CONVERGENCE_MD = f"{R}/tables/convergence.md"
CONVERGENCE_FIGURE = f"{R}/figures/convergence.png"
LEDGER_MARK = f"{R}/ledger/{{pair}}.{{variant}}.seed{{seed}}.json"  # a run recorded in the ledger
README_SECTION = f"{R}/tables/readme_section.md"


# --- input functions: the files a rule reads, for its wildcards (the templates filled in)


# shared


def data_file(w, split, kind, side):
    """A split of the pair's data: kind is tok or bpe (or a syntax feature), side is src or tgt."""
    lang = src_lang(w) if side == "src" else tgt_lang(w)
    return SPLIT_FILE.format(pair=w.pair, split=split, kind=kind, lang=lang)


def variant_source(w, split):
    """The subword source a variant reads: the pair's, or its preordered version."""
    entry = variant_entry(w)
    if entry.get("source", "original") == "preordered":
        return PREORDERED.format(
            pair=w.pair, method=entry["preorder"], split=split, kind="bpe", lang=src_lang(w)
        )
    return data_file(w, split, "bpe", "src")


# corpus


def fetch_inputs(w):
    """The user's local files of the corpus (an edit reruns the fetch; none for a download)."""
    return source_files(config["data"][w.pair], w.corpus, w.pair)


def extra_ref_input(w):
    """The user's file of the further reference (an edit reruns its preparation)."""
    return extra_ref_file(config["data"][w.pair], w.testset, int(w.n), w.pair)


def split_inputs(w):
    """The tokenized sources of the pair, both sides."""

    def tokenized(lang):
        return [TOKENIZED.format(pair=w.pair, corpus=c, lang=lang) for c in fetched_corpora(w.pair)]

    return {"src": tokenized(src_lang(w)), "tgt": tokenized(tgt_lang(w))}


def tok_dir(w):
    return TOK_DIR.format(pair=w.pair)  # the folder of the split rule's inputs


def select_inputs(w):
    """The raw and tokenized corpus a split is cut from (a holdout: the training corpus)."""
    names = dict(pair=w.pair, corpus=corpus_of(w), lang=w.lang)
    return {"raw": RAW.format(**names), "tok": TOKENIZED.format(**names)}


def first_reference(w):
    return TEXT.format(pair=w.pair, split=w.testset, lang=w.lang)


def extra_refs(w):
    """The prepared further references of a test set (NIST sets have four references in all)."""
    n = len(split_extra_refs(config["data"][w.pair], w.testset))
    return [
        EXTRA_REF.format(pair=w.pair, testset=w.testset, n=i, lang=tgt_lang(w))
        for i in range(1, n + 1)
    ]


# syntax


def syntax_report_inputs(w):
    """The parses, parse summaries and binary trees of every parsed split."""
    splits, src = source_splits(w.pair), src_lang(w)
    return {
        "conllu": [CONLLU.format(pair=w.pair, split=s, lang=src) for s in splits],
        "summaries": [PARSE_SUMMARY.format(pair=w.pair, split=s, lang=src) for s in splits],
        "features": [data_file(w, s, "btree", "src") for s in splits],
    }


# subwords


def subword_train_inputs(w):
    return {"src": data_file(w, "train", "tok", "src"), "tgt": data_file(w, "train", "tok", "tgt")}


def spm_model(pair, lang):
    """The subword model of one side: the pair's joint model, or the side's own
    (subword.joint: false)."""
    return (
        SPM_MODEL.format(pair=pair)
        if config["subword"]["joint"]
        else SPM_SIDE_MODEL.format(pair=pair, lang=lang)
    )


def side_spm_model(w):
    return spm_model(w.pair, w.lang)


def spm_inputs(w):
    """The subword models a model of the pair reads:
    {"spm": source (or joint), "spm_tgt": target}."""
    return {"spm": spm_model(w.pair, src_lang(w)), "spm_tgt": spm_model(w.pair, tgt_lang(w))}


def source_spm(w):
    return spm_inputs(w)["spm"]  # the source side's (or the joint) model


# alignment and preordering


def gold_files(w):
    """The pair's gold alignment set: [sentence pairs, links], or none."""
    gold = align_gold(w.pair)
    return [gold[k] for k in ("pairs", "links")] if gold else []


def align_inputs(w):
    """The tokenized source and target of every split (one joint run), and the gold set."""
    return {
        "src": [data_file(w, s, "tok", "src") for s in source_splits(w.pair)],
        "tgt": [data_file(w, s, "tok", "tgt") for s in source_splits(w.pair)],
        "gold": gold_files(w),
    }


def split_source_tok(w):
    return data_file(w, w.split, "tok", "src")


def split_source_bpe(w):
    return data_file(w, w.split, "bpe", "src")


def train_source_tok(w):
    return data_file(w, "train", "tok", "src")


def btg_inputs(w, split):
    return {
        "tok": data_file(w, split, "tok", "src"),
        "conllu": CONLLU.format(pair=w.pair, split=split, lang=src_lang(w)),
        "classes": WORD_CLASSES.format(pair=w.pair),
    }


def btg_train_inputs(w):
    return btg_inputs(w, "train")


def btg_apply_inputs(w):
    return btg_inputs(w, w.split)


def preorder_models(w, method, full, fold_template):
    """The model(s) preordering a split: for the training split under cross-fitting (K > 1) the
    K fold models in fold order, sentence i taking model i % K; else the full model."""
    folds = PREORDER[method]["cross_fit"]
    if w.split == "train" and folds > 1:
        return [fold_template.format(pair=w.pair, fold=k) for k in range(folds)]
    return full.format(pair=w.pair)


def btg_apply_models(w):
    return preorder_models(w, "btg", BTG_MODEL, BTG_FOLD_MODEL)


def rvnn_inputs(w, split):
    return {
        "tok": data_file(w, split, "tok", "src"),
        "conllu": CONLLU.format(pair=w.pair, split=split, lang=src_lang(w)),
        "tree": data_file(w, split, "btree", "src"),
    }


def rvnn_train_inputs(w):
    return rvnn_inputs(w, "train")


def rvnn_apply_inputs(w):
    return rvnn_inputs(w, w.split)


def rvnn_apply_models(w):
    return preorder_models(w, "rvnn", RVNN_MODEL, RVNN_FOLD_MODEL)


def preorder_report_inputs(w):
    """Of every parsed split: the source, its alignment and the permutation of each method."""
    splits = source_splits(w.pair)
    return {
        "tok": [data_file(w, s, "tok", "src") for s in splits],
        "align": [SPLIT_ALIGN.format(pair=w.pair, split=s) for s in splits],
        "perms": [PERM.format(pair=w.pair, method=m, split=s) for m in METHODS for s in splits],
    }


# training


def train_inputs(w):
    """The subword models, the variant's source (maybe preordered) and its extra features."""
    if in_ledger(w):  # the ledger keeps no checkpoint: a missing input that says so
        return {"ledger_run": ledger_no_model(w)}
    return {
        **spm_inputs(w),  # spm (source or joint), spm_tgt
        "train_src": variant_source(w, "train"),
        "train_tgt": data_file(w, "train", "bpe", "tgt"),
        "dev_src": variant_source(w, "dev"),
        "dev_ref": data_file(w, "dev", "tok", "tgt"),
        "features": list(variant_features(w, "train").values())
        + list(variant_features(w, "dev").values()),
    }


# evaluation


def test_source(w):
    return variant_source(w, w.testset)


def test_source_tok(w):
    return data_file(w, w.testset, "tok", "src")


def test_source_bpe(w):
    return data_file(w, w.testset, "bpe", "src")


def test_features(w):
    return list(variant_features(w, w.testset).values())


def test_reference(w):
    return TEXT.format(pair=w.pair, split=w.testset, lang=tgt_lang(w))


def test_reference_tok(w):
    return data_file(w, w.testset, "tok", "tgt")


def score_files():
    return [SCORE.format(**r, testset=t) for r in runs() for t in testsets(r["pair"])]


def metrics_files():
    return [METRICS.format(**r) for r in runs()]


def length_hyps(w):
    """The translations of every variant's first seed."""
    return [
        HYP.format(pair=w.pair, variant=v, seed=seeds_of(v)[0], testset=w.testset)
        for v in config["variants"]
    ]


def length_align(w):
    # With preordering: Kendall τ of each order per bin (Kawara 2021 Figs 7-10).
    return [SPLIT_ALIGN.format(pair=w.pair, split=w.testset)] if METHODS else []


def length_perms(w):
    return [PERM.format(pair=w.pair, method=m, split=w.testset) for m in METHODS]


def _system_runs():
    return [
        dict(
            r,
            metrics=METRICS.format(**r),
            decodes=[
                [
                    variant_source(SimpleNamespace(pair=r["pair"], variant=r["variant"]), t),
                    TRANSLATE_BENCHMARK.format(**r, testset=t),
                ]
                for t in testsets(r["pair"])
            ],
        )
        for r in runs()
    ]


def systems_files():
    return [
        f for r in _system_runs() for f in (r["metrics"], *(x for d in r["decodes"] for x in d))
    ]


def aer_results(w):
    return [
        AER_JSON.format(pair=p, variant=v, seed=s)
        for p in aer_pairs()
        for v in subword_only_variants(p)
        for s in seeds_of(v)
    ]


def aer_aligner_stats(w):
    return [ALIGN_STATS.format(pair=p) for p in aer_pairs()]


def head_similarity_results(w):
    return [
        HEADS.format(pair=w.pair, variant=v, seed=s, testset=w.testset)
        for v in transformer_variants()
        for s in seeds_of(v)
    ]


# swap noise


def _swap_runs(w):
    """(variant, percent, hypothesis) of the variant's first seed, for every variant that reads
    plain subwords."""
    return [
        (
            v,
            p,
            SWAP_HYP.format(
                pair=w.pair, percent=p, variant=v, seed=seeds_of(v)[0], testset=w.testset
            ),
        )
        for v in subword_only_variants(w.pair)
        for p in SWAP["percents"]
    ]


def swap_noise_hyps(w):
    return [hyp for _, _, hyp in _swap_runs(w)]


# findings


def findings_inputs(wildcards):
    """Every claim's translations and references, and the tokenized source of a length subset."""
    claims = json.loads(findings_spec())["claims"]
    files = set()
    for c in claims:
        files.update(c["system_hyps"], c["baseline_hyps"], c["refs"])
        files.update([c["source"]] if "source" in c else [])
    return sorted(files)


def convergence_runs():
    return [dict(r, metrics=METRICS.format(**r)) for r in runs()]


def readme_sources(wildcards=None):
    """The tables of the README section, in reading order: findings, AER, cross-paper."""
    sources = [FINDINGS_MD] if findings_claims() else []
    sources.append(CONVERGENCE_MD)
    if aer_pairs():
        sources.append(AER_MD)
    if config["evaluation"]["cross_paper"]:
        sources.append(CROSS_PAPER_MD)
    return sources
