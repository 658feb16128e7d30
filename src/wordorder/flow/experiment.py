"""The experiment the Snakefile builds: every helper of the rules (paths, input functions,
params, findings, ledger) and the final targets, ``all_targets()``, the input of rule all."""

from __future__ import annotations

import inspect
import types

from wordorder.corpus.pairdata import pair_langs
from wordorder.flow.ledgered import Ledgered


class Experiment(Ledgered):
    def preorder_targets(self) -> list[str]:
        """The quality table of every pair and the model inputs of every (method, split)."""
        if not self.methods:
            return []
        p, out = self.paths, []
        for pair in self.config["pairs"]:
            src = pair_langs(pair)[0]
            out.append(p.PREORDER_MD.format(pair=pair))
            for m in self.methods:
                for s in self.source_splits(pair):
                    for kind in ("tok", "bpe", "positions"):
                        out.append(
                            p.PREORDERED.format(pair=pair, method=m, split=s, kind=kind, lang=src)
                        )
        return out

    def all_targets(self) -> list[str]:
        """Every table and figure the config asks for."""
        p, pairs, evaluation = self.paths, self.config["pairs"], self.config["evaluation"]
        per_testset = [dict(pair=x, testset=t) for x in pairs for t in self.testsets(x)]
        targets = [
            p.BLEU_CSV,
            p.BLEU_MD,
            p.GENERATION_CSV,
            p.GENERATION_MD,
            p.NGRAM_CSV,
            p.NGRAM_MD,
            p.SYSTEMS_CSV,
            p.SYSTEMS_MD,
            p.CURVES,
        ]
        targets += [p.LENGTH_FIGURE.format(**x) for x in per_testset]
        if self.config["syntax"]["parse"]:
            targets += [p.SYNTAX_JSON.format(pair=x) for x in pairs]
        targets += self.preorder_targets()
        if self.swap["percents"]:
            chosen = self.swap["testsets"]  # null: every test set
            targets += [
                p.SWAP_FIGURE.format(**x)
                for x in per_testset
                if chosen is None or x["testset"] in chosen
            ]
        if self.aer_pairs():
            targets.append(p.AER_MD)
        if evaluation["head_similarity"] and self.transformer_variants():
            targets += [p.HEAD_SIMILARITY_MD.format(**x) for x in per_testset]
        effects = [p.FINDINGS_MD, p.FINDINGS_JSON] if self.findings_wanted() else []
        if evaluation["cross_paper"]:
            effects += [p.CROSS_PAPER_MD, p.CROSS_PAPER_CSV]
        if effects:
            effects += [p.CONVERGENCE_MD, p.CONVERGENCE_FIGURE]
        if evaluation["readme"] or evaluation["readme_page"]:
            effects.append(p.README_SECTION)
        return targets + effects + self.ledger_targets()


#: snakemake.common.FUNC_OVERWRITE_PARAMS_ATTR (tests/unit/test_flow.py keeps them equal)
SNAKEMAKE_PARAMS_ATTR = "_overwrite_params"


def _declare_signatures(cls: type) -> None:
    """Snakemake reads an input or params function's signature on every call (~20,000 calls in
    the five papers' DAG; slower still for a bound method): give each helper its parameters
    once, as Snakemake's ``overwrite_function_params`` hook would (the mapping inspect makes
    for the bound method, without ``self``)."""
    for name in dir(cls):
        func = getattr(cls, name)
        if not name.startswith("_") and inspect.isfunction(func):
            parameters = inspect.signature(func).parameters
            bound = types.MappingProxyType(dict(list(parameters.items())[1:]))
            setattr(func, SNAKEMAKE_PARAMS_ATTR, bound)


_declare_signatures(Experiment)
