# The workflow's Python is the typed package wordorder.flow: one Experiment (EX) built from the
# validated config and the variant registry, whose path templates (P.MODEL, ...) the rules
# name as outputs and whose input and params functions (EX.train_inputs, ...) they call. This
# file binds those names and declares the wildcard constraints.
from wordorder.flow import Experiment, as_json, fill, one_of
from wordorder.resources import gpus, mem_mb

EX = Experiment(config, CONFIG_FILES)
P = EX.paths  # one template per result file (src/wordorder/flow/paths.py)
R, L = P.R, P.L  # results and logs of this experiment (the rules' log and benchmark f-strings)
PREORDER, METHODS, SWAP, LEDGER = EX.preorder, EX.methods, EX.swap, EX.ledger


wildcard_constraints:
    pair=one_of(config["pairs"]),
    variant=one_of(config["variants"]),
    lang="[a-z]{2,3}",
    split="[A-Za-z0-9_]+",
    corpus="[A-Za-z0-9_]+",
    testset="[A-Za-z0-9_]+",
    seed=r"\d+",
    method="gold|btg|rvnn",
    fold=r"\d+",
    scatteritem=r"\d+-of-\d+",
