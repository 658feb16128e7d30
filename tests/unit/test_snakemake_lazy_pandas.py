"""Snakemake's start without pandas (:mod:`wordorder.snakemake_lazy_pandas`): the SLURM executor
plugin, which Snakemake imports at every start, gets pandas when its efficiency report uses it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# In a fresh interpreter of the venv (its .pth installs the hooks): what Snakemake's start does.
PROBE = """
import json, sys
import snakemake_executor_plugin_slurm.efficiency_report as report
after_start = "pandas" in sys.modules
stand_in = type(report.pd).__name__
na = report.pd.isna(report.pd.NA)  # the first use imports pandas
import pandas
print(json.dumps({
    "after_start": after_start,
    "stand_in": stand_in,
    "isna": bool(na),
    "real": type(pandas).__name__ == "module" and hasattr(pandas, "DataFrame"),
    "maxrss_mb": report.parse_maxrss("2048K"),
    "same_frame": report.pd.DataFrame is pandas.DataFrame,
}))
"""


def test_the_slurm_plugin_loads_without_pandas_and_its_report_gets_it_when_used():
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    assert seen == {
        "after_start": False,
        "stand_in": "_Deferred",
        "isna": True,
        "real": True,
        "maxrss_mb": 2.0,
        "same_frame": True,
    }


def test_a_pandas_imported_before_is_left_alone(monkeypatch):
    from wordorder import snakemake_lazy_pandas

    pandas = pytest.importorskip("pandas")
    snakemake_lazy_pandas.before()
    assert sys.modules["pandas"] is pandas
    monkeypatch.delitem(sys.modules, "pandas")
    snakemake_lazy_pandas.before()
    assert type(sys.modules["pandas"]).__name__ == "_Deferred"
    snakemake_lazy_pandas.wrap(sys.modules["json"])
    assert "pandas" not in sys.modules  # monkeypatch puts pandas back
