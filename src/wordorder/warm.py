"""Warm jobs: one process with wordorder's heavy modules already imported (torch alone takes
~4 s a job on a 2-core machine) forks a child for each ``wordorder`` job of a local run (the
runner: :mod:`wordorder.warm_runner`).

The ``wordorder`` command (:func:`main`) is the client. When ``WORDORDER_WARM`` names a folder
(the Snakefile sets it for local runs unless the config says ``warm_jobs: false``), it connects
to the runner of its interpreter, wordorder source and environment (a socket in that folder),
hands over its arguments, working folder, umask, environment and standard streams (the file
descriptors themselves), relays SIGINT/SIGTERM/SIGHUP to the job and exits with the job's
status. Without a runner it starts one in the background for the jobs after it and runs its own
job in-process, as without ``WORDORDER_WARM``; so does a job under torchrun.

A forked job sees what a fresh process would: the client's folder, environment (the runner was
started with the same one, so modules read the same variables at import), umask and streams,
and fresh random seeds. When the client dies (its shell killed), the job gets SIGTERM, as a
trainer whose parent died (:func:`wordorder.lifetime.die_with_parent`). A runner leaves after
30 s without jobs; one for an older source tree is never asked again (the key changes).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import sys
from pathlib import Path

ENV = "WORDORDER_WARM"
# Variables that differ between otherwise equal jobs and that no module reads at import.
VOLATILE = ("PYTEST_CURRENT_TEST", "OLDPWD", "PWD", "SHLVL", "_")


def key(env: dict[str, str] | None = None, root: Path | None = None) -> str:
    """The runner a job may use: same interpreter, same wordorder source files under ``root``
    (path, size, modification time), same environment but for :data:`VOLATILE`."""
    env = dict(os.environ if env is None else env)
    for name in VOLATILE:
        env.pop(name, None)
    root = Path(__file__).parent if root is None else root
    files = sorted(
        (str(p.relative_to(root)), s.st_size, s.st_mtime_ns)
        for p in root.rglob("*.py")
        for s in (p.stat(),)
    )
    text = json.dumps([sys.executable, str(root), files, sorted(env.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def for_local_jobs(local_exec: bool, enabled: bool) -> None:
    """Let the jobs this Snakemake process starts use warm runners: local runs only (a cluster
    job is one ``wordorder`` process on its node, with nothing to share), and never over a
    ``WORDORDER_WARM`` the user set (``0`` turns it off)."""
    if enabled and local_exec and ENV not in os.environ:
        import tempfile

        if folder_for(tempfile.gettempdir()):
            os.environ[ENV] = tempfile.gettempdir()


def folder_for(base: str) -> Path | None:
    """The runners' folder under ``base`` for this user (created 0700), or None when it is
    not ours or its socket paths would be too long for AF_UNIX."""
    path = Path(base) / f"wordorder-warm-{os.getuid()}"
    if len(str(path)) > 80:
        return None
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = path.stat()
    except OSError:
        return None
    return path if st.st_uid == os.getuid() and not st.st_mode & 0o077 else None


def main() -> int:
    """The ``wordorder`` command: the job through a warm runner when there is one, else here."""
    warm = os.environ.get(ENV)
    # (torchrun watches its own workers: they run here)
    if warm and warm != "0" and "TORCHELASTIC_RUN_ID" not in os.environ:
        folder = folder_for(warm)
        status = run_warm(sys.argv[1:], folder) if folder else None
        if status is not None:
            return status
    from wordorder.cli import main as run_here

    return run_here()


def run_warm(argv: list[str], folder: Path) -> int | None:
    """Run the job through the runner in ``folder``: its exit status, or None when there is no
    runner to take it (one is then started for the next job)."""
    path = folder / f"{key()}.sock"
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
        from wordorder.lifetime import die_with_parent

        die_with_parent()  # a killed shell ends this client, and the client its job
        umask = os.umask(0)
        os.umask(umask)
        job = {"argv": argv, "cwd": os.getcwd(), "umask": umask, "env": dict(os.environ)}
        data = json.dumps(job).encode()
        socket.send_fds(conn, [len(data).to_bytes(4, "big") + data], [0, 1, 2])
        reply = conn.makefile("r", encoding="ascii")
        conn.settimeout(60)  # a runner that does not fork the job within a minute is stuck
        first = reply.readline().split()
        conn.settimeout(None)
    except OSError:
        conn.close()
        start_runner(path)
        return None
    if first[:1] != ["pid"]:  # the runner refused the job before forking: run it here
        conn.close()
        return None
    pid = int(first[1])

    def relay(sig: int, _frame: object) -> None:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, relay)
    last = reply.readline().split()
    if last[:1] != ["exit"]:
        print(f"error: the warm job runner ({path}) ended during the job", file=sys.stderr)
        return 1
    return int(last[1])


def start_runner(path: Path) -> None:
    """Start a runner for ``path`` in its own session (it outlives this job); it leaves at
    once when another is starting or running (its lock)."""
    import subprocess

    with open(path.with_suffix(".log"), "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "wordorder.warm_runner", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
