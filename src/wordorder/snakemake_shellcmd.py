"""Snakemake formats a listed job's shell command once, not three times.

``Job.log_info``, which prints each job of a dry run (``snakemake -n``) and of a run, reads the
job's ``shellcmd`` property three times, and each read formats the rule's command anew from the
job's input, output, params and wildcards: 9,150 formattings for the five papers' 3,050 jobs,
~7 % of that dry run under cProfile (2026-11-29; docs/measured.md). Here, while ``log_info`` runs
for a job, the property answers with the command formatted once at its start.

Applied by :mod:`wordorder.snakemake_hooks` when Snakemake imports ``snakemake.jobs``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

_LISTING = threading.local()  # .job, .command: the job whose log_info runs in this thread


def wrap(module: ModuleType) -> None:
    """Wrap ``Job.log_info`` and ``Job.shellcmd`` of ``snakemake.jobs`` (once)."""
    cls = module.Job
    if getattr(cls.log_info, "_wordorder", False):
        return
    format_command: Callable[[Any], str | None] = cls.shellcmd.fget
    log_info = cls.log_info

    def shellcmd(self: Any) -> str | None:
        if getattr(_LISTING, "job", None) is self:
            return _LISTING.command
        return format_command(self)

    @functools.wraps(log_info)
    def log_info_once(self: Any, *args: Any, **kwargs: Any) -> Any:
        _LISTING.command = format_command(self)
        _LISTING.job = self
        try:
            return log_info(self, *args, **kwargs)
        finally:
            _LISTING.job = None

    log_info_once._wordorder = True  # type: ignore[attr-defined]
    cls.shellcmd = property(shellcmd, doc=cls.shellcmd.__doc__)
    cls.log_info = log_info_once
