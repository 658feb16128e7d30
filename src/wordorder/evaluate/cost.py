"""What an experiment cost: the CPU time every ``wordorder`` job logged on its last line
(``<command> finished in W s; peak memory M MB; cpu C s``), summed over the logs folder. A job
whose log reports ``"device": "cuda"`` (training's summary, decoding's speed record) ran on a GPU
machine: its CPU time is that machine's host's, and is also given apart."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FOOTER = re.compile(r"(\S+) finished in ([\d.]+) s; peak memory (\d+) MB; cpu ([\d.]+) s")
ON_GPU = re.compile(r'"device": "cuda')


def cost_summary(logs: Path) -> dict:
    """``{jobs, cpu_hours, wall_hours, by_command: {command: cpu_hours}, gpu_jobs,
    gpu_host_cpu_hours}`` over every ``*.log`` under ``logs`` (a job rerun after a failure counts
    once per finished run)."""
    jobs, cpu, wall, gpu_jobs, gpu_cpu = 0, 0.0, 0.0, 0, 0.0
    by_command: dict[str, float] = defaultdict(float)
    for path in sorted(Path(logs).rglob("*.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        start = 0
        for match in FOOTER.finditer(text):
            jobs += 1
            wall += float(match.group(2))
            cpu += float(match.group(4))
            by_command[match.group(1)] += float(match.group(4)) / 3600
            if ON_GPU.search(text, start, match.start()):
                gpu_jobs += 1
                gpu_cpu += float(match.group(4))
            start = match.end()
    return {
        "jobs": jobs,
        "cpu_hours": cpu / 3600,
        "wall_hours": wall / 3600,
        "by_command": dict(sorted(by_command.items(), key=lambda kv: -kv[1])),
        "gpu_jobs": gpu_jobs,
        "gpu_host_cpu_hours": gpu_cpu / 3600,
    }


def cost_markdown(cost: Mapping[str, Any]) -> str:
    top = ", ".join(f"{c} {h:.2f}" for c, h in list(cost["by_command"].items())[:4])
    return (
        f"Measured cost of the jobs finished before this table: {cost['cpu_hours']:.2f} "
        f"CPU-hours over {cost['jobs']} jobs ({cost['wall_hours']:.2f} job-hours of wall "
        f"time; by command: {top})."
        + (
            f" {cost['gpu_jobs']} of the jobs ran on a GPU machine: "
            f"{cost['gpu_host_cpu_hours']:.2f} of those CPU-hours are its host's."
            if cost.get("gpu_jobs")
            else ""
        )
        + "\n"
    )
