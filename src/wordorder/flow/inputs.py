"""The input functions of the rules: the files a job reads, for its wildcards (the path
templates of :mod:`wordorder.flow.paths` filled in). In the order of the rule files."""

from __future__ import annotations

from typing import Any

from wordorder.corpus.pairdata import extra_ref_file, source_files
from wordorder.flow.config_view import ConfigView, Wildcards, run_of


class Inputs(ConfigView):
    # corpus

    def fetch_inputs(self, w: Wildcards) -> list[str]:
        """The user's local files of the corpus (an edit reruns the fetch; none for a
        download)."""
        return list(source_files(self.config["data"][w.pair], w.corpus, w.pair))

    def extra_ref_input(self, w: Wildcards) -> list[str]:
        """The user's file of the further reference (an edit reruns its preparation)."""
        return list(extra_ref_file(self.config["data"][w.pair], w.testset, int(w.n), w.pair))

    def split_inputs(self, w: Wildcards) -> dict[str, list[str]]:
        """The tokenized sources of the pair, both sides."""
        corpora = self.fetched_corpora(w.pair)

        def tokenized(lang: str) -> list[str]:
            return [self.paths.TOKENIZED.format(pair=w.pair, corpus=c, lang=lang) for c in corpora]

        return {"src": tokenized(self.src_lang(w)), "tgt": tokenized(self.tgt_lang(w))}

    def tok_dir(self, w: Wildcards) -> str:
        return self.paths.TOK_DIR.format(pair=w.pair)  # the folder of the split rule's inputs

    def select_inputs(self, w: Wildcards) -> dict[str, str]:
        """The raw and tokenized corpus a split is cut from (a holdout: the training corpus)."""
        names = dict(pair=w.pair, corpus=self.corpus_of(w), lang=w.lang)
        return {"raw": self.paths.RAW.format(**names), "tok": self.paths.TOKENIZED.format(**names)}

    def first_reference(self, w: Wildcards) -> str:
        return self.paths.TEXT.format(pair=w.pair, split=w.testset, lang=w.lang)

    # syntax

    def syntax_report_inputs(self, w: Wildcards) -> dict[str, list[str]]:
        """The parses, parse summaries and binary trees of every parsed split."""
        splits, src = self.source_splits(w.pair), self.src_lang(w)
        return {
            "conllu": [self.paths.CONLLU.format(pair=w.pair, split=s, lang=src) for s in splits],
            "summaries": [
                self.paths.PARSE_SUMMARY.format(pair=w.pair, split=s, lang=src) for s in splits
            ],
            "features": [self.data_file(w, s, "btree", "src") for s in splits],
        }

    def parse_shards(self, w: Wildcards) -> dict[str, list[str]]:
        """The parse shards of a split and their statistics: ``syntax.shards`` for the training
        split, ``syntax.eval_shards`` for dev and each test set (small: one job by default,
        rather than as many start-ups of the parser as the training corpus needs)."""
        key = "shards" if w.split == "train" else "eval_shards"
        n = int(self.config["syntax"][key])
        names = dict(pair=w.pair, split=w.split, lang=w.lang)
        shards = [
            self.paths.PARSE_SHARD.format(**names, scatteritem=f"{k}-of-{n}")
            for k in range(1, n + 1)
        ]
        return {"shards": shards, "stats": [f"{s}.json" for s in shards]}

    # subwords

    def subword_train_inputs(self, w: Wildcards) -> dict[str, str]:
        return {
            "src": self.data_file(w, "train", "tok", "src"),
            "tgt": self.data_file(w, "train", "tok", "tgt"),
        }

    def side_spm_model(self, w: Wildcards) -> str:
        return self.spm_model(w.pair, w.lang)

    def source_spm(self, w: Wildcards) -> str:
        return self.spm_inputs(w)["spm"]  # the source side's (or the joint) model

    # alignment and preordering

    def gold_files(self, w: Wildcards) -> list[str]:
        """The pair's gold alignment set: [sentence pairs, links], or none."""
        gold = self.align_gold(w.pair)
        return [gold[k] for k in ("pairs", "links")] if gold else []

    def align_inputs(self, w: Wildcards) -> dict[str, list[str]]:
        """The tokenized source and target of every split (one joint run), and the gold set."""
        splits = self.source_splits(w.pair)
        return {
            "src": [self.data_file(w, s, "tok", "src") for s in splits],
            "tgt": [self.data_file(w, s, "tok", "tgt") for s in splits],
            "gold": self.gold_files(w),
        }

    def split_source_tok(self, w: Wildcards) -> str:
        return self.data_file(w, w.split, "tok", "src")

    def split_source_bpe(self, w: Wildcards) -> str:
        return self.data_file(w, w.split, "bpe", "src")

    def train_source_tok(self, w: Wildcards) -> str:
        return self.data_file(w, "train", "tok", "src")

    def btg_inputs(self, w: Wildcards, split: str) -> dict[str, str]:
        return {
            "tok": self.data_file(w, split, "tok", "src"),
            "conllu": self.paths.CONLLU.format(pair=w.pair, split=split, lang=self.src_lang(w)),
            "classes": self.paths.WORD_CLASSES.format(pair=w.pair),
        }

    def btg_train_inputs(self, w: Wildcards) -> dict[str, str]:
        return self.btg_inputs(w, "train")

    def btg_apply_inputs(self, w: Wildcards) -> dict[str, str]:
        return self.btg_inputs(w, w.split)

    def preorder_models(self, w: Wildcards, method: str) -> str | list[str]:
        """The model(s) preordering a split: for the training split under cross-fitting
        (K > 1) the K fold models in fold order, sentence i taking model i % K; else the full
        model."""
        p = self.paths
        full, fold = (
            (p.BTG_MODEL, p.BTG_FOLD_MODEL)
            if method == "btg"
            else (p.RVNN_MODEL, p.RVNN_FOLD_MODEL)
        )
        folds = self.preorder[method]["cross_fit"]
        if w.split == "train" and folds > 1:
            return [fold.format(pair=w.pair, fold=k) for k in range(folds)]
        return full.format(pair=w.pair)

    def btg_apply_models(self, w: Wildcards) -> str | list[str]:
        return self.preorder_models(w, "btg")

    def rvnn_inputs(self, w: Wildcards, split: str) -> dict[str, str]:
        return {
            "tok": self.data_file(w, split, "tok", "src"),
            "conllu": self.paths.CONLLU.format(pair=w.pair, split=split, lang=self.src_lang(w)),
            "tree": self.data_file(w, split, "btree", "src"),
        }

    def rvnn_train_inputs(self, w: Wildcards) -> dict[str, str]:
        return self.rvnn_inputs(w, "train")

    def rvnn_apply_inputs(self, w: Wildcards) -> dict[str, str]:
        return self.rvnn_inputs(w, w.split)

    def rvnn_apply_models(self, w: Wildcards) -> str | list[str]:
        return self.preorder_models(w, "rvnn")

    def preorder_report_inputs(self, w: Wildcards) -> dict[str, list[str]]:
        """Of every parsed split: the source, its alignment and the permutation of each
        method."""
        splits, p = self.source_splits(w.pair), self.paths
        return {
            "tok": [self.data_file(w, s, "tok", "src") for s in splits],
            "align": [p.SPLIT_ALIGN.format(pair=w.pair, split=s) for s in splits],
            "perms": [
                p.PERM.format(pair=w.pair, method=m, split=s) for m in self.methods for s in splits
            ],
        }

    # training

    def model_inputs(self, w: Wildcards) -> dict[str, Any]:
        """The subword models, the variant's source (maybe preordered) and its extra
        features: what a model of the run reads (the train rule's inputs outside the
        ledger)."""
        return {
            **self.spm_inputs(w),  # spm (source or joint), spm_tgt
            "train_src": self.variant_source(w, "train"),
            "train_tgt": self.data_file(w, "train", "bpe", "tgt"),
            "dev_src": self.variant_source(w, "dev"),
            "dev_ref": self.data_file(w, "dev", "tok", "tgt"),
            "features": list(self.variant_features(w, "train").values())
            + list(self.variant_features(w, "dev").values()),
        }

    # evaluation

    def test_source(self, w: Wildcards) -> str:
        return self.variant_source(w, w.testset)

    def test_source_tok(self, w: Wildcards) -> str:
        return self.data_file(w, w.testset, "tok", "src")

    def test_source_bpe(self, w: Wildcards) -> str:
        return self.data_file(w, w.testset, "bpe", "src")

    def test_features(self, w: Wildcards) -> list[str]:
        return list(self.variant_features(w, w.testset).values())

    def test_reference_tok(self, w: Wildcards) -> str:
        return self.data_file(w, w.testset, "tok", "tgt")

    def score_files(self) -> list[str]:
        return [
            self.paths.SCORE.format(**r, testset=t)
            for r in self.runs()
            for t in self.testsets(r["pair"])
        ]

    def metrics_files(self) -> list[str]:
        return [self.paths.METRICS.format(**r) for r in self.runs()]

    def length_hyps(self, w: Wildcards) -> list[str]:
        """The translations of every variant's first seed."""
        return [
            self.paths.HYP.format(
                pair=w.pair, variant=v, seed=self.seeds_of(v)[0], testset=w.testset
            )
            for v in self.config["variants"]
        ]

    def length_align(self, w: Wildcards) -> list[str]:
        # With preordering: Kendall τ of each order per bin (Kawara 2021 Figs 7-10).
        return [self.paths.SPLIT_ALIGN.format(pair=w.pair, split=w.testset)] if self.methods else []

    def length_perms(self, w: Wildcards) -> list[str]:
        return [
            self.paths.PERM.format(pair=w.pair, method=m, split=w.testset) for m in self.methods
        ]

    def system_runs(self) -> list[dict[str, Any]]:
        """Every run with its metrics and, per test set, [source, translate benchmark]."""
        p = self.paths
        return [
            dict(
                r,
                metrics=p.METRICS.format(**r),
                decodes=[
                    [
                        self.variant_source(run_of(r["pair"], r["variant"]), t),
                        p.TRANSLATE_BENCHMARK.format(**r, testset=t),
                    ]
                    for t in self.testsets(r["pair"])
                ],
            )
            for r in self.runs()
        ]

    def systems_files(self) -> list[str]:
        return [
            f
            for r in self.system_runs()
            for f in (r["metrics"], *(x for d in r["decodes"] for x in d))
        ]

    def aer_results(self, w: Wildcards) -> list[str]:
        return [
            self.paths.AER_JSON.format(pair=p, variant=v, seed=s)
            for p in self.aer_pairs()
            for v in self.subword_only_variants(p)
            for s in self.seeds_of(v)
        ]

    def aer_aligner_stats(self, w: Wildcards) -> list[str]:
        return [self.paths.ALIGN_STATS.format(pair=p) for p in self.aer_pairs()]

    def head_similarity_results(self, w: Wildcards) -> list[str]:
        return [
            self.paths.HEADS.format(pair=w.pair, variant=v, seed=s, testset=w.testset)
            for v in self.transformer_variants()
            for s in self.seeds_of(v)
        ]

    # swap noise

    def swap_runs(self, w: Wildcards) -> list[tuple[str, Any, str]]:
        """(variant, percent, hypothesis) of the variant's first seed, for every variant that
        reads plain subwords."""
        return [
            (
                v,
                p,
                self.paths.SWAP_HYP.format(
                    pair=w.pair, percent=p, variant=v, seed=self.seeds_of(v)[0], testset=w.testset
                ),
            )
            for v in self.subword_only_variants(w.pair)
            for p in self.swap["percents"]
        ]

    def swap_noise_hyps(self, w: Wildcards) -> list[str]:
        return [hyp for _, _, hyp in self.swap_runs(w)]
