"""Line normalisation applied before tokenization.

Removes what no tokenizer or model should see, and nothing else: control characters
(Unicode category Cc/Cf, except tab which becomes a space), and runs of whitespace, which
become one space. Text is not case-folded or NFKC-normalised here (that would change the
references that BLEU is computed against).
"""

from __future__ import annotations

import re
import unicodedata

_WS = re.compile(r"\s+")
# Zero-width joiners and similar format characters matter in some scripts: keep ZWJ/ZWNJ.
_KEEP_FORMAT = {"\u200c", "\u200d"}


def _is_control(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return (cat == "Cc" and ch not in "\t\n\r") or (cat == "Cf" and ch not in _KEEP_FORMAT)


def normalize_line(text: str) -> str:
    """Drop control characters, turn any whitespace run into one space, strip the ends.

    >>> normalize_line(" a\\tb\\x00c  d\\u200b ")
    'a bc d'
    """
    if any(_is_control(ch) for ch in text):
        text = "".join(ch for ch in text if not _is_control(ch))
    return _WS.sub(" ", text).strip()
