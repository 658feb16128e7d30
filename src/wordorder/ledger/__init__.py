"""The run ledger: a folder of record, kept in the repository, of every finished training run of
a ledgered experiment (config key ``ledger``).

The machines this project runs on are often replaced after a few hours and a GPU is lent for
minutes, so an experiment of many runs only finishes if each finished run outlives its machine.
A run's record holds what the tables need and nothing larger (no checkpoint; a few hundred KB):

    <ledger>/manifest.json             the sha256 of every input any run read (one digest a path)
    <ledger>/inputs/<path>.gz          those inputs, kept once: another machine restores them
                                       instead of rebuilding them (eflomal cannot be seeded, so
                                       alignments and preorders differ from run to run)
    <ledger>/runs/<pair>.<variant>.seed<n>/
        record.json                    the run, its configuration, its inputs' digests, its
                                       provenance (commit, CPU, threads, precision, torch,
                                       wall and CPU time) and the digests of the files below
        metrics.jsonl.gz, train.log.gz the training's log of record and its job log
        <testset>.hyp.gz, <testset>.hyp.tok.gz, <testset>.translate.tsv, <testset>.translate.log.gz

The DAG adds a run once it is trained and decoded (:mod:`~wordorder.ledger.record`), and builds
the tables from ledger runs and local runs alike: a run the ledger holds is restored from it
(:mod:`~wordorder.ledger.restore`), never retrained. A run whose inputs differ from the
manifest's, or whose configuration differs from the one its record was made with, is refused
with one error naming the file or key.
"""

from wordorder.ledger.record import MANIFEST, RECORD, RUNS, ledgered_runs, run_name
from wordorder.ledger.restore import stored_inputs
from wordorder.ledger.workflow import ledger_inputs, ledger_spec, no_checkpoint, run_settings

__all__ = [
    "MANIFEST",
    "RECORD",
    "RUNS",
    "ledger_inputs",
    "ledger_spec",
    "ledgered_runs",
    "no_checkpoint",
    "run_name",
    "run_settings",
    "stored_inputs",
]
