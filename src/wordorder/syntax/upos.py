"""Universal POS tags for the POS-only taggers: STTS (German, HanTa) and ICTCLAS (Chinese, jieba).

The tables follow the Universal Dependencies conversion tables for STTS and for the
ICTCLAS/PKU tag set; a tag not listed maps to ``X``.
"""

from __future__ import annotations

# STTS (Schiller et al. 1999) -> UPOS. HanTa writes some tags with a subtype in parentheses,
# e.g. "VV(FIN)"; the part before "(" is the STTS tag.
_STTS = {
    "ADJA": "ADJ",
    "ADJD": "ADJ",
    "ADV": "ADV",
    "APPR": "ADP",
    "APPRART": "ADP",
    "APPO": "ADP",
    "APZR": "ADP",
    "ART": "DET",
    "CARD": "NUM",
    "FM": "X",
    "ITJ": "INTJ",
    "KOUI": "SCONJ",
    "KOUS": "SCONJ",
    "KON": "CCONJ",
    "KOKOM": "CCONJ",
    "NN": "NOUN",
    "NE": "PROPN",
    "PDS": "PRON",
    "PDAT": "DET",
    "PIS": "PRON",
    "PIAT": "DET",
    "PIDAT": "DET",
    "PPER": "PRON",
    "PPOSS": "PRON",
    "PPOSAT": "DET",
    "PRELS": "PRON",
    "PRELAT": "DET",
    "PRF": "PRON",
    "PWS": "PRON",
    "PWAT": "DET",
    "PWAV": "ADV",
    "PAV": "ADV",
    "PROAV": "ADV",
    "PTKZU": "PART",
    "PTKNEG": "PART",
    "PTKVZ": "ADP",
    "PTKANT": "PART",
    "PTKA": "PART",
    "TRUNC": "X",
    "VVFIN": "VERB",
    "VVIMP": "VERB",
    "VVINF": "VERB",
    "VVIZU": "VERB",
    "VVPP": "VERB",
    "VAFIN": "AUX",
    "VAIMP": "AUX",
    "VAINF": "AUX",
    "VAPP": "AUX",
    "VMFIN": "AUX",
    "VMINF": "AUX",
    "VMPP": "AUX",
    "XY": "X",
    "$,": "PUNCT",
    "$.": "PUNCT",
    "$(": "PUNCT",
    "VV": "VERB",
    "VA": "AUX",
    "VM": "AUX",
}

# ICTCLAS / jieba -> UPOS, by the first letter(s) of the tag (jieba uses e.g. "nr", "ns", "vn").
_ICTCLAS = {
    "a": "ADJ",
    "ad": "ADV",
    "an": "NOUN",
    "b": "ADJ",
    "c": "CCONJ",
    "d": "ADV",
    "e": "INTJ",
    "f": "NOUN",
    "g": "X",
    "h": "PART",
    "i": "X",
    "j": "PROPN",
    "k": "PART",
    "l": "X",
    "m": "NUM",
    "mq": "NUM",
    "n": "NOUN",
    "ng": "NOUN",
    "nr": "PROPN",
    "ns": "PROPN",
    "nt": "PROPN",
    "nz": "PROPN",
    "o": "X",
    "p": "ADP",
    "q": "NOUN",
    "r": "PRON",
    "s": "NOUN",
    "t": "NOUN",
    "u": "PART",
    "uj": "PART",
    "ul": "PART",
    "v": "VERB",
    "vd": "VERB",
    "vn": "NOUN",
    "w": "PUNCT",
    "x": "X",
    "y": "PART",
    "z": "ADJ",
    "eng": "X",
}


def hanta_upos(tag: str) -> str:
    """UPOS of a HanTa/STTS tag: ``hanta_upos("VV(FIN)") == "VERB"``."""
    base = tag.split("(", 1)[0]
    return _STTS.get(tag.replace("(", "").replace(")", ""), _STTS.get(base, "X"))


def jieba_upos(tag: str) -> str:
    """UPOS of a jieba/ICTCLAS tag: the exact tag, else its first letter, else ``X``."""
    return _ICTCLAS.get(tag, _ICTCLAS.get(tag[:1], "X"))
