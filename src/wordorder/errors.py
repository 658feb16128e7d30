"""The one error type users see.

Every problem caused by input (a file, a config value, a missing corpus) is raised as
:class:`WordorderError`; the CLI prints it as a single ``error:`` line (plus a hint saying
what to do next) and exits non-zero, instead of a traceback.
"""

from __future__ import annotations

from pathlib import Path


class WordorderError(Exception):
    """An error in the user's input, reported with its location and what to do next.

    Args:
        message: what is wrong.
        path: the file it is about, if any.
        line: 1-based line number in ``path``, if it applies.
        hint: what the user should do next.
    """

    def __init__(
        self,
        message: str,
        path: str | Path | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        text = where + self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text
