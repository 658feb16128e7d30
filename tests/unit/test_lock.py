"""The install is the lock (requirements/lock-cpu.txt, `make lock`): it holds every direct
dependency of pyproject.toml, its extras included, at the pinned version, every package with
at least one wheel hash, and the CPU torch of constraints.txt."""

from __future__ import annotations

import re
import tomllib


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\[=<>~!; ]", requirement, maxsplit=1)[0]).lower()


def lock_pins(repo) -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes)."""
    pins: dict[str, tuple[str, int]] = {}
    name = None
    for line in (repo / "requirements" / "lock-cpu.txt").read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line):
            name = _name(m[1])
            pins[name] = (m[2], 0)
        elif name and line.strip().startswith("--hash=sha256:"):
            version, hashes = pins[name]
            pins[name] = (version, hashes + 1)
    return pins


def test_the_lock_pins_every_direct_dependency_at_its_version(repo):
    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    direct = list(project["dependencies"])
    direct += [r for extra in project["optional-dependencies"].values() for r in extra]
    pins = lock_pins(repo)
    for requirement in direct:
        name, version = _name(requirement), requirement.split("==")[1].split(";")[0].strip()
        assert name in pins, f"{name} is not in the lock: run make lock"
        assert pins[name][0].split("+")[0] == version, (
            f"{name}: lock {pins[name][0]}, pin {version}"
        )
    assert pins["torch"][0] == "2.13.0+cpu"
    assert all(hashes for _, hashes in pins.values())
    assert len(pins) > 100  # the transitive set, not only the direct pins


def test_requires_python_admits_no_version_the_pins_cannot_run_on(repo):
    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == ">=3.11"
