"""How long Snakemake takes to plan a DAG (``snakemake -n``): the demo, each paper's config in
configs/full/ alone, and their union in one DAG (workflow/papers.smk), against the budgets of
issue 47 (union <= 5 s, demo <= 1.5 s), and as a ratio to another commit measured in the same
run (``--against``, e.g. the commit before the workflow layer moved into src/wordorder/flow).

Times are wall clock of the whole command (interpreter start, plugin loading, config checks,
DAG), the best of ``--repeats`` runs, the two commits' runs interleaved; ``snakemake
--version`` is the floor no workflow can go under. Run from anywhere:

    .venv/bin/python benchmarks/bench_dryrun.py [--repeats 3] [--against bedbdeb] [--union-only]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGETS = {"union (workflow/papers.smk)": 5.0, "demo (configs/default.yaml)": 1.5}


def dry_run(root: Path, *args: str) -> tuple[float, int]:
    """Wall seconds and jobs of ``snakemake -n ARGS`` in ``root``, with ``root``'s package."""
    exe = Path(sys.executable).with_name("snakemake")
    env = {
        **os.environ,
        "PYTHONPATH": str(root / "src"),
        "PATH": f"{exe.parent}:{os.environ['PATH']}",
    }
    t0 = time.perf_counter()
    run = subprocess.run([str(exe), "-n", *args], cwd=root, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if run.returncode:
        raise SystemExit(
            f"snakemake -n {' '.join(args)} failed in {root}:\n{(run.stdout + run.stderr)[-3000:]}"
        )
    found = re.search(r"^total\s+(\d+)", run.stdout + run.stderr, flags=re.M)
    return wall, int(found.group(1)) if found else 0


def floor(repeats: int) -> float:
    exe = Path(sys.executable).with_name("snakemake")
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([str(exe), "--version"], capture_output=True, check=True)
        walls.append(time.perf_counter() - t0)
    return min(walls)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--against", help="a commit to measure in the same run (a git worktree)")
    ap.add_argument("--union-only", action="store_true", help="the demo and the union only")
    args = ap.parse_args()
    dags = [("demo (configs/default.yaml)", ("--configfile", "configs/default.yaml"))]
    if not args.union_only:
        for config in sorted((REPO / "configs" / "full").glob("*.yaml")):
            dags.append((config.stem, ("--configfile", str(config.relative_to(REPO)))))
    dags.append(("union (workflow/papers.smk)", ("-s", "workflow/papers.smk")))
    with tempfile.TemporaryDirectory() as tmp:
        roots = {"this": REPO}
        if args.against:
            other = Path(tmp) / "against"
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "add", "--detach", str(other), args.against],
                check=True,
                capture_output=True,
            )
            (other.parent / "shared").symlink_to(REPO.parent / "shared")
            roots["against"] = other
        try:
            best: dict[tuple[str, str], tuple[float, int]] = {}
            for name, dag in dags:
                for _ in range(args.repeats):
                    for label, root in roots.items():  # interleaved: the same load for both
                        wall, jobs = dry_run(root, *dag)
                        old = best.get((label, name))
                        best[(label, name)] = (min(wall, old[0]) if old else wall, jobs)
        finally:
            if args.against:
                subprocess.run(
                    [
                        "git",
                        "-C",
                        str(REPO),
                        "worktree",
                        "remove",
                        "--force",
                        str(roots["against"]),
                    ],
                    capture_output=True,
                )
    head = f"{'DAG':<30} {'jobs':>6} {'seconds':>8}"
    print(head + (f" {args.against + ' s':>12} {'ratio':>6}" if args.against else "") + "  budget")
    for name, _ in dags:
        wall, jobs = best[("this", name)]
        line = f"{name:<30} {jobs:>6} {wall:>8.2f}"
        if args.against:
            then = best[("against", name)][0]
            line += f" {then:>12.2f} {then / wall:>5.2f}x"
        budget = BUDGETS.get(name)
        if budget:
            line += f"  {budget:.1f} s" + ("" if wall <= budget else " OVER")
        print(line)
    print(f"\nsnakemake --version (the floor): {floor(args.repeats):.2f} s")


if __name__ == "__main__":
    main()
