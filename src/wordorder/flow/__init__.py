"""The workflow layer: everything the Snakefile's rules ask of Python, typed and tested.

``workflow/rules/common.smk`` builds one :class:`Experiment` from the validated config; the rule
files read its path templates (``P.MODEL``) and call its input and params functions
(``EX.train_inputs``). The layers, each a module: :mod:`~wordorder.flow.paths` (where files
live), :mod:`~wordorder.flow.config_view` (pairs, splits, variants, runs),
:mod:`~wordorder.flow.inputs`, :mod:`~wordorder.flow.params`, :mod:`~wordorder.flow.findings`,
:mod:`~wordorder.flow.ledgered` and :mod:`~wordorder.flow.experiment` (the final targets).
Free of heavy imports: every command a user types builds the DAG with it.
"""

from wordorder.flow.config_view import as_json, run_of
from wordorder.flow.experiment import Experiment
from wordorder.flow.paths import Paths, fill, one_of

__all__ = ["Experiment", "Paths", "as_json", "fill", "one_of", "run_of"]
