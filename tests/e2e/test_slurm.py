"""End-to-end on a real SLURM: a single-node cluster (munge, slurmctld, slurmd from Debian's
slurm-wlm) on this machine, and a tiny DAG submitted through the workflow's SLURM profile
(snakemake-executor-plugin-slurm: every job is an sbatch job).

Needs root and slurm-wlm + munge installed (`.ci/run` installs them); skipped otherwise. The
cluster has no accounting database, so the jobs' states come from squeue
(``--slurm-status-command squeue``; jobs stay visible for MinJobAge after they end).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import torch
import yaml
from dag import snakemake, tiny_config

from wordorder.resources import MEMORY, memory_mb

pytestmark = pytest.mark.slow

CONF = Path("/etc/slurm/slurm.conf")  # where srun inside a job looks for it
MARK = "# written by wordorder's tests/e2e/test_slurm.py"


def _conf(state: Path) -> str:
    cpus = os.cpu_count() or 2
    return f"""{MARK}
ClusterName=wordorder
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={state}/ctld
SlurmdSpoolDir={state}/spool
SlurmctldPidFile={state}/slurmctld.pid
SlurmdPidFile={state}/slurmd.pid
SlurmctldLogFile={state}/slurmctld.log
SlurmdLogFile={state}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=3600
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={state}/jobcomp.txt
NodeName=localhost CPUs={cpus} RealMemory=16000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if os.geteuid() != 0 or not shutil.which("slurmctld") or not shutil.which("munged"):
        pytest.skip(
            "a real SLURM needs root and Debian's slurm-wlm and munge (installed by .ci/run)"
        )
    if CONF.exists() and MARK not in CONF.read_text(encoding="utf-8"):
        pytest.skip(f"{CONF} belongs to a real cluster: not touching it")
    state = tmp_path_factory.mktemp("slurm")
    for sub in ("ctld", "spool"):
        (state / sub).mkdir()
    CONF.parent.mkdir(parents=True, exist_ok=True)
    CONF.write_text(_conf(state), encoding="utf-8")
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "chown",
            "-R",
            "munge:munge",
            "/run/munge",
            "/var/log/munge",
            "/var/lib/munge",
            "/etc/munge",
        ],
        check=False,
    )
    if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode != 0:
        subprocess.run(["su", "-s", "/bin/sh", "munge", "-c", "munged"], check=True)
    # a cluster left by an earlier run
    subprocess.run(["scontrol", "shutdown"], capture_output=True)
    time.sleep(1)
    subprocess.run(["slurmctld"], check=True)
    subprocess.run(["slurmd"], check=True)
    deadline = time.monotonic() + 60
    while (
        "idle"
        not in subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True).stdout
    ):
        if time.monotonic() > deadline:
            pytest.fail(
                "the node did not come up: "
                f"{(state / 'slurmd.log').read_text(errors='replace')[-2000:]}"
            )
        time.sleep(0.5)
    yield state
    subprocess.run(["scontrol", "shutdown"], capture_output=True)
    # Left in place, the config makes every later `snakemake` wait ~9 s: the SLURM executor
    # plugin runs `scontrol show config` when it loads, which retries the stopped controller.
    CONF.unlink()


def slurm_config(repo, shared_data, tmp_path, **train):
    """The tiny config with one system and no syntax/preorder branch (the point is that every
    job goes through sbatch); ``train`` overrides training options."""
    config = tiny_config(repo, shared_data, tmp_path)
    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    cfg["variants"] = ["transformer_tiny"]
    cfg["preorder"]["methods"] = []
    cfg["syntax"]["parse"] = False
    cfg["evaluation"] = {}
    del cfg["data"]["en-de"]["align_gold"]
    cfg["train"].update(train)
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return config


def run_on_slurm(repo, config, *args):
    return snakemake(
        repo,
        *args,
        "--workflow-profile",
        str(repo / "workflow" / "profiles" / "slurm"),
        "--configfile",
        str(config),
        "--slurm-status-command",
        "squeue",
        "--slurm-no-account",
        "--slurm-init-seconds-before-status-checks",
        "1",
        timeout=1200,
    )


def test_tiny_dag_through_the_slurm_profile_with_a_time_limited_training(
    cluster, repo, shared_data, tmp_path
):
    """The tiny DAG up to the trained model through the profile, every job via sbatch, in one run
    (CI's budget; decoding and scoring through SLURM add nothing new): SLURM ends
    the training job at its 2-minute limit (SIGTERM): the job saves its state and fails (Snakemake
    deletes its best.pt and metrics.jsonl), the profile's retry resubmits it, and training
    continues from the saved update with the best checkpoint and the metrics log of the
    evaluations before the limit."""
    # 2.75 minutes of training under a 2-minute limit: SLURM ends the first attempt between 120 and
    # ~151 s (it checks time limits every 30 s), after at most ~141 s of training, so it always
    # times out; the rest (24-55 s) fits in the second attempt's two minutes with its start-up, with
    # room to spare: the test runs beside the rest of the suite (Makefile), so start-ups are slow.
    # (A second attempt that finishes only seconds before its limit can be killed while Snakemake
    # registers it: seen once in CI with 1.8 of 1 minute. The next attempt then restores the
    # finished outputs instead of training, wordorder.train.finished, but its log has no "resuming
    # from" line.) --retries 3 covers a slow machine. The retry can start while the first attempt,
    # orphaned when its shell died on SIGTERM, still saves its state (seen in CI: the retry failed
    # in seconds): it waits for it (wordorder.train.exclusive). No periodic saves: the states must
    # come from SIGTERM. Evaluations every 100 updates, so that some come before the limit.
    config = slurm_config(
        repo,
        shared_data,
        tmp_path,
        max_steps=10_000_000,
        max_minutes=2.75,
        eval_every=100,
        checkpoint_every=0,
        log_every=50,
    )
    model = tmp_path / "results/tiny/models/en-de/transformer_tiny/seed1/best.pt"
    run = run_on_slurm(
        repo, config, str(model), "--set-resources", "train:runtime=2", "--retries", "3"
    )
    output = run.stdout + run.stderr
    log_path = tmp_path / "logs" / "tiny" / "train" / "en-de.transformer_tiny.seed1.log"
    train_log = (
        log_path.read_text(encoding="utf-8", errors="replace")
        if log_path.exists()
        else "(no train log)"
    )
    assert run.returncode == 0, (
        output[-3000:] + "\n== the train job's log (last attempt):\n" + train_log[-3000:]
    )
    submitted = output.count("has been submitted with SLURM jobid")
    # fetch, tokenize, split, select, subwords, train: all through sbatch
    assert submitted >= 10, output[-3000:]
    completed = (cluster / "jobcomp.txt").read_text(encoding="utf-8")
    assert "JobState=TIMEOUT" in completed
    assert completed.count("JobState=COMPLETED") + completed.count("JobState=TIMEOUT") >= submitted
    # Memory requests: a heavy rule asks from its input size (wordorder.resources), the rest get
    # the profile's default.
    asked, rule = {}, None
    for line in output.splitlines():
        if line.startswith(("rule ", "localrule ")):
            rule = line.split()[1].rstrip(":")
        elif line.startswith("    resources:") and "mem_mb=" in line and rule:
            asked.setdefault(rule, int(line.split("mem_mb=")[1].split(",")[0]))
    assert asked["split"] == memory_mb(*MEMORY["split"], 0.1) == 200, asked
    assert asked["fetch"] == 2000 and asked["train"] == memory_mb(*MEMORY["train"], 0.1), asked
    log = train_log
    resumed = re.search(r"resuming from \S+state\.pt at update (\d+)", log)  # the retry's log
    assert resumed and int(resumed.group(1)) > 0, log[-3000:]
    assert model.is_file() and '"stop_reason": "max_minutes"' in log
    # The metrics log is whole: each update's records once, the first attempt's included.
    records = [
        json.loads(line)
        for line in (model.parent / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    evals = [r["step"] for r in records if "dev_bleu" in r]
    logs = [r["step"] for r in records if "train_loss" in r]
    assert logs == list(range(50, 50 * len(logs) + 1, 50)), logs
    assert evals[:-1] == list(range(100, 100 * len(evals), 100)), evals  # and one at the end
    # evaluated before the limit
    assert evals[0] <= int(resumed.group(1)), (evals, resumed.group(1))
    best = torch.load(model, weights_only=True)["meta"]
    assert any(
        r.get("best") and r["step"] == best["step"] and r["dev_bleu"] == round(best["dev_bleu"], 4)
        for r in records
    ), (best["step"], records)
    # Finished: the optimizer state is gone, the record of the finished outputs stays.
    resume = tmp_path / "results" / "tiny" / "resume" / "en-de" / "transformer_tiny" / "seed1"
    assert not (resume / "state.pt").exists() and (resume / "state.pt.done").is_file()
