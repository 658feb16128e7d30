"""The layer order of src/wordorder, checked on the import graph.

Every ``import`` and ``from ... import`` of a wordorder module counts, the ones inside
functions too (they are how the heavy modules are kept out of the DAG's start-up, not a way
around the order). A module may import its own layer and the layers below it, never one
above, and no modules import each other, directly or round a loop.
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# Bottom first. ``wordorder.<part>``: a subpackage or a top-level module.
LAYERS: list[set[str]] = [
    # import no wordorder module
    {"errors", "temps", "specials", "progress", "resources", "argtypes", "lifetime"},
    {
        "io",
        "yamlfile",
        "schema",
        "configfiles",
        "seeds",
        "device",
        "lock",
        "snakemake_config_guard",
        "snakemake_wakeups",
        "snakemake_lazy_pandas",
        "snakemake_gc",
        "snakemake_signatures",
        "snakemake_shellcmd",
        "snakemake_output_index",
        "snakemake_parse_cache",
        "snakemake_hooks",
        "cuda_graphs",
        "gpu_table",
    },  # files, YAML, runs, the GPU routes tried
    {"text"},  # normalisation, tokenizers, subword models
    {"corpus"},  # corpus sources, cleaning, splits, a pair's data block
    {"syntax"},  # parsing, CoNLL-U, syntax distances, binary trees
    {"align"},  # eflomal, symmetrization, Pharaoh files, AER
    {"preorder"},  # gold / BTG / RvNN preorders
    {"models"},  # options, layers, the two families, the registry
    {"model_io"},  # checkpoints, subword ids, source features, batches
    {"decode"},  # beam search, DecodeOptions, the translate step
    {"train"},  # the training loop (which decodes dev: train -> decode)
    {"evaluate"},  # scores and the analyses (some decode)
    {"ledger"},  # the run ledger: records of finished runs (reads job logs as the cost table)
    {
        "config",
        "variants",
        "settings_check",
    },  # the experiment config, the variant registry, their cross-checks
    {"flow"},  # the workflow layer: paths, input and params functions, targets of the rules
    {"cli"},  # the wordorder command's parser and subcommands
    {"warm", "warm_runner"},  # the wordorder command: a job through a warm runner, or cli here
]


def modules(src: Path, package: str = "wordorder") -> dict[str, Path]:
    """Dotted module name → file, packages named by their ``__init__.py``."""
    out = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph(src: Path, package: str = "wordorder") -> dict[str, set[str]]:
    """Module → the package's modules it imports (a name imported from a module or a package
    counts as an import of that module or package's ``__init__``)."""
    mods = modules(src, package)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(known(a.name) for a in node.names if a.name.split(".")[0] == package)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from .x import y, from .. import z
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                if origin.split(".")[0] != package:
                    continue
                for a in node.names:
                    sub = f"{origin}.{a.name}"
                    targets.add(sub if sub in mods else known(origin))
        graph[name] = {t for t in targets if t and t != name}
    return graph


def part(module: str) -> str:
    """The layer unit of a module: ``wordorder.<part>`` (the root package itself: '')."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import loops: strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def back_edges(graph: dict[str, set[str]], layers: list[set[str]]) -> list[str]:
    """Imports from a layer to a higher one, as 'importer -> imported'."""
    level = {name: i for i, layer in enumerate(layers) for name in layer}
    return sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if part(a) and part(b) and level[part(a)] < level[part(b)]
    )


@functools.cache
def package_graph() -> dict[str, set[str]]:
    return import_graph(SRC)


def test_every_part_of_the_package_has_one_layer():
    listed = [name for layer in LAYERS for name in layer]
    assert len(listed) == len(set(listed))
    parts = {part(m) for m in modules(SRC)} - {""}
    assert parts == set(listed), (
        "place new modules or subpackages in LAYERS (and in docs/architecture.md)"
    )


def test_no_import_cycles():
    assert cycles(package_graph()) == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    assert back_edges(package_graph(), LAYERS) == []


def test_building_the_parser_imports_no_heavy_module():
    """Every step of the DAG starts by building the whole ``wordorder`` parser: the subcommands
    import torch, pandas and matplotlib inside their functions, never at module level. A fresh
    interpreter, since this one may have imported them for other tests."""
    code = (
        "import sys\n"
        "import wordorder.warm\n"  # the command's entry point
        "from wordorder.cli import build_parser\n"
        "build_parser()\n"
        "print(' '.join(m for m in ('torch', 'pandas', 'matplotlib') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == []


def test_the_checks_see_a_planted_back_edge_and_loop(tmp_path):
    """A function-local import from the bottom layer to the top closes a loop: both checks
    report it (relative imports are followed too)."""
    pkg = tmp_path / "wordorder"
    (pkg / "decode").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "decode" / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from wordorder.decode import beam\n")
    (pkg / "decode" / "beam.py").write_text("from .. import errors\nfrom ..errors import f\n")
    graph = import_graph(tmp_path)
    assert graph["wordorder.errors"] == {"wordorder.decode.beam"}
    assert graph["wordorder.decode.beam"] == {"wordorder.errors"}
    assert back_edges(graph, [{"errors"}, {"decode"}]) == [
        "wordorder.errors -> wordorder.decode.beam"
    ]
    assert cycles(graph) == [["wordorder.decode.beam", "wordorder.errors"]]


def test_the_steps_that_need_no_model_start_without_torch():
    """Importing torch costs ~3 s of CPU on these machines, paid by every job that does: the
    parsing, tree, alignment, preordering (but RvNN), scoring and table steps never load it
    (binarize.py once did, through the tree distances: ~3 s for each syntax-project,
    preorder-gold, btg-train and btg-apply job)."""
    steps = [
        "wordorder.cli",
        "wordorder.corpus.runner",
        "wordorder.syntax.parse",
        "wordorder.syntax.project",
        "wordorder.align.eflomal_run",
        "wordorder.preorder.runner",
        "wordorder.preorder.wordclass",
        "wordorder.evaluate.scores",
        "wordorder.evaluate.report",
        "wordorder.evaluate.findings",
        "wordorder.ledger.record",
    ]
    code = (
        "import importlib, sys\n"
        "sys.modules['torch'] = None  # an import of torch raises\n"
        f"for name in {steps!r}:\n"
        "    importlib.import_module(name)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
