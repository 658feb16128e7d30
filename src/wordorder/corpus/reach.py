"""Whether a download's host can be reached at all: one TCP connection, bounded in time, so
that being offline is reported in seconds (:mod:`wordorder.corpus.download` asks before each
attempt, :mod:`wordorder.corpus.testsets` before sacreBLEU's own download)."""

from __future__ import annotations

import socket
import threading
import urllib.request
from urllib.parse import urlsplit


def unreachable(url: str, timeout: float) -> str | None:
    """Why the host of ``url`` (or the proxy for it) cannot be reached, or None if it can.

    Opens and closes one TCP connection. The attempt runs in a thread so that even a hanging
    name lookup (which ignores socket timeouts) costs at most about ``timeout`` seconds.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return None
    host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        p = urlsplit(proxy if "://" in proxy else "http://" + proxy)
        host, port = p.hostname or "", p.port or 80
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome.append(None)
        except OSError as e:
            outcome.append(e)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout + 1)
    if not outcome:
        return f"no answer from {host}:{port} within {timeout:g} s"
    if outcome[0] is not None:
        return f"cannot connect to {host}:{port}: {outcome[0]}"
    return None
