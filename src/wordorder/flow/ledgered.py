"""The run ledger's side of the workflow (config key ``ledger``; workflow/rules/ledger.smk):
which runs it holds, the train rule's inputs for those it holds, and what recording a new run
reads and passes to ``wordorder ledger-add``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wordorder import ledger
from wordorder.flow.config_view import Wildcards, as_json, run_of
from wordorder.flow.findings import Findings


class Ledgered(Findings):
    def __init__(self, config: dict[str, Any], locate: Any = None) -> None:
        super().__init__(config, locate)
        self.ledger: str | None = config["ledger"]
        self.ledgered = ledger.ledgered_runs(self.ledger)

    def run_name(self, w: Wildcards) -> str:
        return ledger.run_name(w.pair, w.variant, w.seed)

    def in_ledger(self, w: Wildcards) -> bool:
        return self.run_name(w) in self.ledgered

    def train_inputs(self, w: Wildcards) -> dict[str, Any]:
        """What a model of the run reads; for a run the ledger holds (which keeps no
        checkpoint) one missing input that says so."""
        if self.in_ledger(w):
            return {"ledger_run": ledger.no_checkpoint(self.run_name(w), str(self.ledger))}
        return self.model_inputs(w)

    def ledger_record(self, w: Wildcards) -> str:
        # Missing for a run the ledger lacks: Snakemake then takes train / translate instead.
        return f"{self.ledger}/runs/{self.run_name(w)}/record.json"

    def ledger_config_json(self, w: Wildcards) -> str:
        return as_json(ledger.run_settings(self.config, self.model_options(w), int(w.seed)))

    def ledger_test_files(self, w: Wildcards, testset: str) -> dict[str, Any]:
        t = run_of(w.pair, w.variant, w.seed, testset=testset)
        p = self.paths
        outputs = dict(hyp=p.HYP, tok=p.HYP_TOK, benchmark=p.TRANSLATE_BENCHMARK)
        return {k: v.format(**vars(t)) for k, v in outputs.items()} | dict(
            src=self.test_source(t), features=self.test_features(t), ref=self.references(t)
        )

    def ledger_perms(self, w: Wildcards) -> list[str]:
        # the permutations behind a variant's preorder positions (eflomal's alignments differ
        # from run to run, so the ledger keeps them: another machine projects the same positions)
        method = self.variant_entry(w).get("preorder")
        if not method:
            return []
        return [
            self.paths.PERM.format(pair=w.pair, method=method, split=s)
            for s in self.source_splits(w.pair)
        ]

    def ledger_add_inputs(self, w: Wildcards) -> dict[str, Any]:
        tests = [self.ledger_test_files(w, t) for t in self.testsets(w.pair)]
        train = self.train_inputs(w) | {"perm": self.ledger_perms(w)}
        return ledger.ledger_inputs(self.paths.METRICS.format(**vars_of(w)), train, tests)

    def ledger_spec_json(self, w: Wildcards, input: Any) -> str:
        named = dict(input.items())
        threads = self.config["threads"]
        logs = self.paths.L
        spec = ledger.ledger_spec(
            w.pair, w.variant, w.seed, named, self.testsets(w.pair), logs, threads
        )
        return as_json(spec)

    def ledger_inputs(self, producers: Iterable[Any]) -> list[str]:
        """The stored inputs the ledger_input rule restores: those one rule alone makes here
        (a file made beside others, by select or subword_train, is rebuilt, since two jobs
        would write it). ``producers``: the workflow's rules."""
        rules = list(producers)

        def restorable(key: str) -> bool:
            made_by = [r for r in rules if r.is_producer(f"{self.paths.R}/{key}")]
            return all(len(r.output) == 1 for r in made_by)

        return [k for k in ledger.stored_inputs(self.ledger) if restorable(k)]

    def ledger_targets(self) -> list[str]:
        if not self.ledger:
            return []
        todo = [r for r in self.runs() if ledger.run_name(**r) not in self.ledgered]
        return [self.paths.LEDGER_MARK.format(**r) for r in todo]


def vars_of(w: Wildcards) -> dict[str, Any]:
    """The pair, variant and seed of a job's wildcards."""
    return {"pair": w.pair, "variant": w.variant, "seed": w.seed}
