"""Snakemake translates each Snakefile once per process, not once per module that includes it.

``workflow/papers.smk`` makes each of the five papers a module of the same ``workflow/Snakefile``,
so Snakemake's parser (a tokenizer-driven translation of the Snakefile language into Python)
translated the same eleven files five times: 56 translations, ~0.2 s of the union's dry run
(2026-11-30). A translation depends on the file's text, its path, Snakemake's
``overwrite_shellcmd`` and, for rules without a name only, the count of rules before it; here it
is kept by (path, ``overwrite_shellcmd``, text) and given again with the line map it made and the
rule count moved on by as many rules. Files with an unnamed rule, and files that are not local,
are translated each time as before.

Applied by :mod:`wordorder.snakemake_hooks` when Snakemake imports ``snakemake.workflow``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any

#: what Snakemake's parser writes for a rule without a name (its code then names the count)
UNNAMED = "@workflow.rule(name=None,"
#: (path, overwrite_shellcmd, text) -> (code, rules in the file, line map)
_DONE: dict[tuple[str, Any, str], tuple[str, int, dict[int, int]]] = {}


def wrap(module: ModuleType) -> None:
    """Replace ``parse`` in ``snakemake.workflow`` (the name ``Workflow.include`` calls)."""
    names = vars(module)
    parse: Callable[..., tuple[str, int]] = names["parse"]
    if getattr(parse, "_wordorder", False):
        return
    local = names["LocalSourceFile"]  # snakemake.sourcecache's, as the module imports it

    @functools.wraps(parse)
    def translate_once(
        path: Any,
        workflow: Any,
        linemap: dict[int, int],
        overwrite_shellcmd: Any = None,
        rulecount: int = 0,
    ) -> tuple[str, int]:
        if not isinstance(path, local):
            return parse(path, workflow, linemap, overwrite_shellcmd, rulecount)
        with workflow.sourcecache.open(path) as f:
            key = (path.get_path_or_uri(secret_free=True), overwrite_shellcmd, f.read())
        done = _DONE.get(key)
        if done is None:
            lines: dict[int, int] = {}
            code, count = parse(path, workflow, lines, overwrite_shellcmd, rulecount)
            if UNNAMED in code:
                linemap.update(lines)
                return code, count
            done = _DONE[key] = (code, count - rulecount, lines)
        code, rules, lines = done
        linemap.update(lines)
        return code, rulecount + rules

    translate_once._wordorder = True  # type: ignore[attr-defined]
    names["parse"] = translate_once
