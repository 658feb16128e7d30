"""The papers' claimed effects (evaluation.findings) against this run's: the claims it can
answer, their specification for the findings rule, and the README section's sources."""

from __future__ import annotations

from typing import Any

from wordorder.flow.config_view import as_json, run_of
from wordorder.flow.params import Params


class Findings(Params):
    def findings_claims(self) -> list[dict[str, Any]]:
        """The claims this run can answer: pair, system and baseline all in the run."""
        return [c for c in self.config["evaluation"]["findings"] if not self._lacks(c)]

    def findings_unjudged(self) -> list[dict[str, Any]]:
        """The claims this run cannot answer, each with the reason (the table lists them, so a
        claim never disappears without a word)."""
        return [
            {**c, "reason": f"{' and '.join(self._lacks(c))} not in this run"}
            for c in self.config["evaluation"]["findings"]
            if self._lacks(c)
        ]

    def _lacks(self, claim: dict[str, Any]) -> list[str]:
        """What of a claim's pair and systems this run does not have."""
        missing = [f"pair {claim['pair']}"] if claim["pair"] not in self.config["pairs"] else []
        return missing + [
            f"variant {claim[k]}"
            for k in ("system", "baseline")
            if claim[k] not in self.config["variants"]
        ]

    def findings_wanted(self) -> bool:
        return bool(self.config["evaluation"]["findings"])

    def findings_claim_specs(self) -> list[dict[str, Any]]:
        """Each claim with the files and settings the findings rule needs to judge it."""
        evaluation = self.config["evaluation"]

        def hyps(c: dict[str, Any], variant: str) -> list[str]:
            return [
                self.paths.HYP.format(pair=c["pair"], variant=variant, seed=s, testset=c["testset"])
                for s in self.seeds_of(variant)
            ]

        claims = []
        for c in self.findings_claims():
            w = run_of(c["pair"], c["system"], testset=c["testset"])
            claims.append(
                {
                    **c,
                    "lang": self.tgt_lang(w),
                    "lowercase": c["pair"] in evaluation["case_insensitive"],
                    "brevity": evaluation["bleu_brevity"],
                    "system_hyps": hyps(c, c["system"]),
                    "baseline_hyps": hyps(c, c["baseline"]),
                    "system_seeds": self.seeds_of(c["system"]),
                    "baseline_seeds": self.seeds_of(c["baseline"]),
                    "refs": self.references(w),
                    # a length subset (min_source_words) is judged on the tokenized source's words
                    **({"source": self.test_source_tok(w)} if c.get("min_source_words") else {}),
                }
            )
        return claims

    def findings_spec(self, wildcards: Any = None) -> str:
        title = f"{self.config['experiment']}: the papers' effects"
        claims, unjudged = self.findings_claim_specs(), self.findings_unjudged()
        return as_json({"title": title, "claims": claims, "unjudged": unjudged})

    def findings_inputs(self, wildcards: Any = None) -> list[str]:
        """Every claim's translations and references, and the tokenized source of a length
        subset."""
        files: set[str] = set()
        for c in self.findings_claim_specs():
            files.update(c["system_hyps"], c["baseline_hyps"], c["refs"])
            files.update([c["source"]] if "source" in c else [])
        return sorted(files)

    def convergence_runs(self) -> list[dict[str, Any]]:
        return [dict(r, metrics=self.paths.METRICS.format(**r)) for r in self.runs()]

    def convergence_json(self) -> str:
        return as_json({"runs": self.convergence_runs()})

    def readme_sources(self, wildcards: Any = None) -> list[str]:
        """The tables of the README section, in reading order: findings, AER, cross-paper."""
        p = self.paths
        sources = [p.FINDINGS_MD] if self.findings_wanted() else []
        sources.append(p.CONVERGENCE_MD)
        if self.aer_pairs():
            sources.append(p.AER_MD)
        if self.config["evaluation"]["cross_paper"]:
            sources.append(p.CROSS_PAPER_MD)
        return sources
