"""Issue 49, case 12: a disk that is full before a run starts gave a raw ``OSError [Errno 28]``
from the results folder's lock, naming no path. Now one error names the lock file."""

from __future__ import annotations

import subprocess

import pytest
from cli_checks import small_disk

from wordorder import lock
from wordorder.errors import WordorderError


def test_a_full_disk_when_the_lock_is_taken(tmp_path):
    disk = small_disk(tmp_path, "64k")
    try:
        folder = disk / "results" / "exp"
        folder.mkdir(parents=True)
        (folder / lock.LOCK_NAME).touch()  # the file exists; writing the holder needs a block
        filler = disk / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True)
        with pytest.raises(WordorderError) as e:
            lock.take(folder)
        assert str(e.value).startswith(
            f"{folder / lock.LOCK_NAME}: cannot write the lock of the results folder: No space "
            "left on device"
        ), str(e.value)
        assert folder.absolute() not in lock._held
    finally:
        subprocess.run(["umount", str(disk)], check=False)
