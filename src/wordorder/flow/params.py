"""The params functions of the rules: JSON options, CLI arguments and titles (in the order
of the rule files). A list goes to the shell as one quoted word per item ({params.x:q})."""

from __future__ import annotations

from typing import Any

from wordorder.config import clean_options
from wordorder.corpus.pairdata import split_spec
from wordorder.flow.config_view import Wildcards, as_json
from wordorder.flow.inputs import Inputs


class Params(Inputs):
    # corpus

    def fetch_spec(self, w: Wildcards) -> str:
        return as_json(split_spec(self.config["data"][w.pair], w.corpus))

    def pair_data(self, w: Wildcards) -> str:
        return as_json(self.config["data"][w.pair])

    def pair_clean_options(self, w: Wildcards) -> str:
        return as_json(clean_options(self.config, w.pair))

    def testset_spec(self, w: Wildcards) -> str:
        return as_json(self.config["data"][w.pair]["test"][w.testset])

    # subwords

    def subword_options(self) -> str:
        """The sentencepiece options (``joint`` decides which rule runs, not how a model
        trains)."""
        return as_json({k: v for k, v in self.config["subword"].items() if k != "joint"})

    def spm_tgt_arg(self, w: Wildcards) -> list[str]:
        """The CLI arguments naming the target side's model: none for a joint model."""
        models = self.spm_inputs(w)
        return ["--spm-tgt", models["spm_tgt"]] if models["spm_tgt"] != models["spm"] else []

    # alignment and preordering

    def align_gold_args(self, w: Wildcards, input: Any) -> list[str]:
        """The gold set's CLI arguments (the input's gold files), or none."""
        gold = self.align_gold(w.pair)
        if not gold:
            return []
        # the swap flag is a setting, passed apart (gold_swap_arg): see scoring_args
        return ["--gold-pairs", input.gold[0], "--gold-links", input.gold[1]]

    def preorderer_options(self, method: str) -> str:
        """The training options of a learned preorderer as JSON, with the split seed.
        cross_fit is the rules' business and stays out: the options, and so the outputs, of
        cross_fit 1 are those of before the option existed."""
        options = {k: v for k, v in self.preorder[method].items() if k != "cross_fit"}
        return as_json({**options, "seed": self.config["split_seed"]})

    # training

    def model_json(self, w: Wildcards) -> str:
        return as_json(self.model_options(w))

    def train_features_json(self, w: Wildcards) -> str:
        train = self.variant_features(w, "train")
        dev = self.variant_features(w, "dev")
        return as_json({name: {"train": train[name], "dev": dev[name]} for name in train})

    def train_launcher(self) -> list[str]:
        """One process, or torchrun starting train_processes DDP processes (one per GPU)."""
        n = self.config["train_processes"]
        if n > 1:
            return ["torchrun", "--standalone", "--nproc_per_node", str(n), "-m", "wordorder.cli"]
        return ["wordorder"]

    # evaluation

    def test_features_json(self, w: Wildcards) -> str:
        return as_json(self.variant_features(w, w.testset))

    def extra_ref_args(self, w: Wildcards, input: Any) -> list[str]:
        """--extra-ref per further reference (the input's files)."""
        return [a for path in input.extra_refs for a in ("--extra-ref", path)]

    def scoring_args(self, w: Wildcards) -> list[str]:
        """--bleu-brevity (the config's rule) and --lowercase where the pair is scored
        case-insensitively. Apart from the files: Snakemake records only
        params that are not computed from the input, so a setting mixed into the file
        arguments would change the command but rerun nothing (issue 49, case 1)."""
        evaluation = self.config["evaluation"]
        args = ["--bleu-brevity", evaluation["bleu_brevity"]]
        return args + (["--lowercase"] if w.pair in evaluation["case_insensitive"] else [])

    def length_hyp_args(self, w: Wildcards, input: Any) -> list[str]:
        return [f"{v}={h}" for v, h in zip(self.config["variants"], input.hyps, strict=True)]

    def length_tau_args(self, w: Wildcards, input: Any) -> list[str]:
        if not self.methods:
            return []
        perms = (f"{m}={p}" for m, p in zip(self.methods, input.perms, strict=True))
        return ["--align", input.align[0], "--perms", *perms]

    def length_title(self, w: Wildcards) -> str:
        firsts = {self.seeds_of(v)[0] for v in self.config["variants"]}
        run = f"seed {firsts.pop()}" if len(firsts) == 1 else "each system's first seed"
        return f"{self.config['experiment']} {w.pair} {w.testset}: BLEU by source length ({run})"

    def systems_json(self) -> str:
        return as_json({"runs": self.system_runs()})

    def gold_swap_arg(self, w: Wildcards) -> list[str]:
        gold = self.align_gold(w.pair) or {}
        return ["--gold-swap"] if gold.get("swap") else []

    def head_similarity_title(self, w: Wildcards) -> str:
        experiment = self.config["experiment"]
        return f"{experiment} {w.pair} {w.testset}: head similarity between feature groups"

    # swap noise (Chen et al. 2019, Figs 3-5)

    def swap_noise_hyp_args(self, w: Wildcards) -> list[str]:
        return [f"{v}:{p}={hyp}" for v, p, hyp in self.swap_runs(w)]

    def swap_noise_title(self, w: Wildcards) -> str:
        return f"{self.config['experiment']} {w.pair} {w.testset}: BLEU under swap noise"
