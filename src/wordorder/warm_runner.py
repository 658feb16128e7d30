"""The warm job runner (:mod:`wordorder.warm`): a process with wordorder's heavy modules imported
that forks a child for each job a ``wordorder`` client hands it, and tells the client the
child's pid and, when it ends, its exit status. Started by a client as
``python -m wordorder.warm_runner SOCKET``; it leaves after ``IDLE_S`` seconds without jobs."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path

IDLE_S = 30.0
# Imported before the runner takes jobs: what the jobs would import first thing.
PRELOAD = (
    "numpy",
    "torch",
    "sentencepiece",
    "sacrebleu",
    "matplotlib.pyplot",
    "wordorder.cli",
    "wordorder.train.runner",
    "wordorder.train.trainer",
    "wordorder.decode.runner",
    "wordorder.evaluate.plots",
)


def serve(path: Path) -> None:
    """Accept jobs on ``path`` until idle for :data:`IDLE_S` seconds; fork one child a job."""
    import fcntl
    import importlib
    import select
    import time

    lock = open(path.with_suffix(".lock"), "w")  # noqa: SIM115 - held for the runner's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another runner has this key
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    path.unlink(missing_ok=True)  # a runner that died left it
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    print(f"runner {os.getpid()}: ready on {path}", flush=True)
    jobs: dict[int, socket.socket] = {}
    idle_since = time.monotonic()
    try:
        while jobs or time.monotonic() - idle_since < IDLE_S:
            ready, _, _ = select.select([server.fileno(), wake_r], [], [], 1.0)
            if wake_r in ready:
                os.read(wake_r, 4096)
            if server.fileno() in ready:
                try:
                    conn, _ = server.accept()
                except OSError:  # out of descriptors, say: the client runs its job itself
                    continue
                pid = fork_job(conn, closing=(server, wake_r, wake_w, lock, *jobs.values()))
                if pid:
                    jobs[pid] = conn
            while jobs:
                pid, status = os.waitpid(-1, os.WNOHANG)
                if not pid:
                    break
                code = os.waitstatus_to_exitcode(status)
                conn = jobs.pop(pid)
                try:
                    conn.sendall(f"exit {code if code >= 0 else 128 - code}\n".encode())
                except OSError:
                    pass  # the client is gone: nobody to tell
                conn.close()
                idle_since = time.monotonic()
    finally:
        path.unlink(missing_ok=True)


def fork_job(conn: socket.socket, closing: tuple) -> int:
    """Read a job from ``conn`` and fork it: the child's pid (0 when the job was unreadable)."""
    fds: list[int] = []
    try:
        conn.settimeout(10)
        data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        size = int.from_bytes(data[:4], "big")
        data = data[4:]
        while len(data) < size:
            more = conn.recv(size - len(data))
            if not more:
                raise OSError("the client left")
            data += more
        job = json.loads(data)
        if len(fds) != 3:
            raise OSError("expected the client's three standard streams")
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        conn.close()
        return 0
    conn.settimeout(None)
    pid = os.fork()
    if pid == 0:  # the child never returns into the runner's loop
        code = 1
        try:
            for item in closing:
                os.close(item) if isinstance(item, int) else item.close()
            code = run_job(job, fds, conn)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    for fd in fds:
        os.close(fd)
    print(f"job {pid}: wordorder {' '.join(job['argv'][:1])}", flush=True)
    try:
        conn.sendall(f"pid {pid}\n".encode())
    except OSError:
        pass  # the client left: its job sees the connection closed and stops
    return pid


def run_job(job: dict, fds: list[int], conn: socket.socket) -> int:
    """In the forked child: become the client's process as far as the job can tell, then run
    the ``wordorder`` command. Returns the exit status."""
    import random
    import threading
    import time
    import traceback

    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    os.setpgid(0, 0)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(job["cwd"])
    os.umask(job["umask"])
    os.environ.clear()
    os.environ.update(job["env"])
    time.tzset()
    sys.argv = ["wordorder", *job["argv"]]
    sys.stdout.reconfigure(line_buffering=os.isatty(1))  # type: ignore[union-attr]
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        sys.modules["torch"].seed()

    def watch() -> None:  # the client died (its shell killed): stop as a job whose shell died
        while conn.recv(1024):
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()
    try:
        from wordorder.cli import main as run_here

        code = run_here()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    import atexit

    atexit._run_exitfuncs()  # what a process's normal end runs (logging's flush, finalizers)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
