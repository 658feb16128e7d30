"""Where every file of an experiment lives: one template per result file, written once.

A template keeps Snakemake's wildcards (``{pair}``, ``{variant}``, ...) for the rules to match;
:func:`fill` names some of them for a rule's output (``fill(PERM, method="gold")``), and the input
functions fill all of them for a job. A template with a ``{kind}`` (or ``{method}``) serves
several files. Logs and benchmarks stay beside their rule in the rule files (no step reads
them; the translate benchmark, read by the systems table, is the exception).
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def fill(template: str, **values: object) -> str:
    """The template with these wildcards filled in and the others left to Snakemake:
    ``fill(PERM, method="gold")`` is ``"<R>/preorder/{pair}/gold/{split}.perm"``."""
    return re.sub(r"\{(\w+)\}", lambda m: str(values.get(m[1], m[0])), template)


def one_of(names: Iterable[str]) -> str:
    """A wildcard constraint matching exactly one of ``names``."""
    return "|".join(re.escape(n) for n in names)


class Paths:
    """The templates of one experiment, under ``<results>/<experiment>`` (``R``) with logs
    under ``<logs>/<experiment>`` (``L``); downloads are shared by every experiment."""

    def __init__(self, results: str, logs: str, experiment: str) -> None:
        R = self.R = f"{results}/{experiment}"
        self.L = f"{logs}/{experiment}"
        self.DOWNLOADS = f"{results}/downloads"

        # Corpus: fetched and tokenized sources, the split plan, and the files of each split.
        self.RAW = f"{R}/data/{{pair}}/raw/{{corpus}}.{{lang}}"
        self.TOK_DIR = f"{R}/data/{{pair}}/tok"
        self.TOKENIZED = f"{self.TOK_DIR}/{{corpus}}.{{lang}}"
        self.SPLITS = f"{R}/data/{{pair}}/splits.json"
        self.TEXT = (
            f"{R}/data/{{pair}}/{{split}}.{{lang}}"  # untokenized (a test set's: the reference)
        )
        # kind: tok, bpe, or a syntax feature (pos, bieo, dep, heads, btree, word, head)
        self.SPLIT_FILE = f"{R}/data/{{pair}}/{{split}}.{{kind}}.{{lang}}"
        self.SPLIT_TOK = fill(self.SPLIT_FILE, kind="tok")
        self.SPLIT_BPE = fill(self.SPLIT_FILE, kind="bpe")
        self.EXTRA_REF = f"{R}/data/{{pair}}/refs/{{testset}}.{{n}}.{{lang}}"

        # Syntax
        self.PARSE_SHARD = f"{R}/data/{{pair}}/parse/{{split}}.{{lang}}.{{scatteritem}}.conllu"
        self.PARSE_SHARD_STATS = f"{self.PARSE_SHARD}.json"
        self.CONLLU = f"{R}/data/{{pair}}/{{split}}.{{lang}}.conllu"
        self.PARSE_SUMMARY = f"{R}/data/{{pair}}/{{split}}.{{lang}}.parse.json"
        self.SYNTAX_JSON = f"{R}/syntax/{{pair}}.json"
        self.SYNTAX_FIGURE = f"{R}/figures/syntax_{{pair}}.png"

        # Subwords: the joint model, or one per side (subword.joint: false)
        self.SPM_MODEL = f"{R}/data/{{pair}}/spm.model"
        self.SPM_VOCAB = f"{R}/data/{{pair}}/spm.vocab"
        self.SPM_SIDE_MODEL = f"{R}/data/{{pair}}/spm.{{lang}}.model"
        self.SPM_SIDE_VOCAB = f"{R}/data/{{pair}}/spm.{{lang}}.vocab"

        # Alignment and preordering
        self.ALIGN_JOINT = f"{R}/data/{{pair}}/align/joint.align"
        self.ALIGN_STATS = f"{R}/data/{{pair}}/align/stats.json"
        self.SPLIT_ALIGN = f"{R}/data/{{pair}}/{{split}}.align"
        self.WORD_CLASSES = f"{R}/preorder/{{pair}}/classes.tsv"
        self.BTG_MODEL = f"{R}/preorder/{{pair}}/btg/model.npz"
        self.BTG_STATS = f"{R}/preorder/{{pair}}/btg/train.json"
        self.RVNN_MODEL = f"{R}/preorder/{{pair}}/rvnn/model.pt"
        self.RVNN_STATS = f"{R}/preorder/{{pair}}/rvnn/train.json"
        # cross-fitting (preorder.<method>.cross_fit = K > 1): model k is trained without fold k
        self.BTG_FOLD_MODEL = f"{R}/preorder/{{pair}}/btg/fold{{fold}}/model.npz"
        self.BTG_FOLD_STATS = f"{R}/preorder/{{pair}}/btg/fold{{fold}}/train.json"
        self.RVNN_FOLD_MODEL = f"{R}/preorder/{{pair}}/rvnn/fold{{fold}}/model.pt"
        self.RVNN_FOLD_STATS = f"{R}/preorder/{{pair}}/rvnn/fold{{fold}}/train.json"
        self.PERM = f"{R}/preorder/{{pair}}/{{method}}/{{split}}.perm"
        # kind: tok, bpe, positions
        self.PREORDERED = f"{R}/preorder/{{pair}}/{{method}}/{{split}}.{{kind}}.{{lang}}"
        self.PREORDER_QUALITY = f"{R}/preorder/{{pair}}/quality.json"
        self.PREORDER_CSV = f"{R}/tables/preorder_quality_{{pair}}.csv"
        self.PREORDER_MD = f"{R}/tables/preorder_quality_{{pair}}.md"
        self.PREORDER_FIGURE = f"{R}/figures/preorder_{{pair}}.png"

        # Models: one per (pair, variant, seed)
        self.MODEL = f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/best.pt"
        self.METRICS = f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/metrics.jsonl"
        self.TRAIN_STATE = f"{R}/resume/{{pair}}/{{variant}}/seed{{seed}}/state.pt"

        # Evaluation
        self.HYP = f"{R}/translations/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.hyp"
        self.HYP_TOK = f"{self.HYP}.tok"
        self.TRANSLATE_BENCHMARK = (
            f"{R}/benchmarks/translate/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.tsv"
        )
        self.SCORE = f"{R}/scores/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.json"
        self.BLEU_CSV = f"{R}/tables/bleu.csv"
        self.BLEU_MD = f"{R}/tables/bleu.md"
        self.BLEU_TEX = f"{R}/tables/bleu.tex"
        self.GENERATION_CSV = f"{R}/tables/generation.csv"
        self.GENERATION_MD = f"{R}/tables/generation.md"
        self.NGRAM_CSV = f"{R}/tables/ngram_precision.csv"
        self.NGRAM_MD = f"{R}/tables/ngram_precision.md"
        self.CURVES = f"{R}/figures/training_curves.png"
        self.SYSTEMS_CSV = f"{R}/tables/systems.csv"
        self.SYSTEMS_MD = f"{R}/tables/systems.md"
        self.LENGTH_CSV = f"{R}/tables/length_{{pair}}_{{testset}}.csv"
        self.LENGTH_MD = f"{R}/tables/length_{{pair}}_{{testset}}.md"
        self.LENGTH_FIGURE = f"{R}/figures/bleu_by_length_{{pair}}_{{testset}}.png"
        self.AER_JSON = f"{R}/aer/{{pair}}/{{variant}}/seed{{seed}}.json"
        self.AER_LINKS = f"{R}/aer/{{pair}}/{{variant}}/seed{{seed}}.align"
        self.AER_CSV = f"{R}/tables/aer.csv"
        self.AER_MD = f"{R}/tables/aer.md"
        self.HEADS = f"{R}/heads/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.json"
        self.HEAD_SIMILARITY_MD = f"{R}/tables/head_similarity_{{pair}}_{{testset}}.md"

        # Swap noise
        self.SWAP_PERM = f"{R}/noise/{{pair}}/swap{{percent}}/{{testset}}.perm"
        # kind: tok, bpe, positions
        self.SWAPPED = f"{R}/noise/{{pair}}/swap{{percent}}/{{testset}}.{{kind}}"
        self.SWAP_HYP = (
            f"{R}/noise/{{pair}}/swap{{percent}}/{{variant}}/seed{{seed}}/{{testset}}.hyp"
        )
        self.SWAP_HYP_TOK = f"{self.SWAP_HYP}.tok"
        self.SWAP_CSV = f"{R}/tables/swap_noise_{{pair}}_{{testset}}.csv"
        self.SWAP_MD = f"{R}/tables/swap_noise_{{pair}}_{{testset}}.md"
        self.SWAP_FIGURE = f"{R}/figures/swap_noise_{{pair}}_{{testset}}.png"

        # Findings
        self.FINDINGS_MD = f"{R}/tables/findings.md"
        self.FINDINGS_JSON = f"{R}/tables/findings.json"
        self.CROSS_PAPER_CSV = f"{R}/tables/cross_paper.csv"
        self.CROSS_PAPER_MD = f"{R}/tables/cross_paper.md"
        self.CONVERGENCE_MD = f"{R}/tables/convergence.md"
        self.CONVERGENCE_FIGURE = f"{R}/figures/convergence.png"
        # a run recorded in the ledger
        self.LEDGER_MARK = f"{R}/ledger/{{pair}}.{{variant}}.seed{{seed}}.json"
        self.README_SECTION = f"{R}/tables/readme_section.md"
