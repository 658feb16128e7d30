"""Snakemake's reading of function parameters (:mod:`wordorder.snakemake_signatures`): the same
parameters as ``inspect.signature`` gives, read once per function (and per function under a
method), a function's own ``_overwrite_params`` first, and in place in Snakemake's modules."""

from __future__ import annotations

import functools
import gc
import inspect
import json
import subprocess
import sys

from wordorder import snakemake_signatures as sig


def plain(wildcards, input, attempt=1):  # noqa: A002 - Snakemake's names
    return attempt


class Holder:
    def method(self, wildcards, threads):
        return threads

    @classmethod
    def made(cls, wildcards):
        return cls

    def __call__(self, wildcards, output):
        return output


def test_the_parameters_are_those_inspect_gives():
    holder = Holder()
    for func in (
        plain,
        holder.method,
        Holder.made,
        holder,
        functools.partial(plain, input=[]),
        len,
        lambda wildcards, **kwargs: None,
    ):
        assert list(sig.function_params(func).items()) == list(
            inspect.signature(func).parameters.items()
        ), func


def test_each_function_is_read_once_and_a_method_once_for_all_its_objects():
    first = sig.function_params(plain)
    assert sig.function_params(plain) is first
    a, b = Holder(), Holder()
    assert sig.function_params(a.method) is sig.function_params(b.method)
    assert list(sig.function_params(a.method)) == ["wildcards", "threads"]
    assert list(sig.function_params(Holder.method)) == ["self", "wildcards", "threads"]


def test_a_function_that_names_its_parameters_keeps_them():
    def named(*args):
        return args

    assert list(sig.function_params(named)) == ["args"]
    named._overwrite_params = {"wildcards": None, "input": None}  # set after a first read
    assert sig.function_params(named) == {"wildcards": None, "input": None}


def test_a_function_that_goes_is_forgotten():
    def passing(wildcards):
        return wildcards

    sig.function_params(passing)
    assert passing in sig._FUNCTIONS
    before = len(sig._FUNCTIONS)
    del passing
    gc.collect()
    assert len(sig._FUNCTIONS) == before - 1


PROBE = """
import json
import snakemake.common, snakemake.rules, snakemake.jobs
from wordorder.snakemake_signatures import function_params
print(json.dumps([m.get_function_params is function_params
                  for m in (snakemake.common, snakemake.rules, snakemake.jobs)]))
"""


def test_snakemake_modules_use_it():
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == [True, True, True]
