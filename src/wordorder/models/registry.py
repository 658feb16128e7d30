"""Model options, size presets, and ``build_model`` (the one way models are constructed).

A variant's model options (configs/variants.yaml) are a dict such as
``{"family": "transformer", "preset": "small", "dropout": 0.3}``: the preset fills the sizes,
explicit keys override it. The options themselves live in :mod:`wordorder.models.options`;
new architectures add entries to :data:`FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from wordorder.errors import WordorderError
from wordorder.models.base import Seq2SeqModel
from wordorder.models.options import ModelOptions
from wordorder.models.presets import PRESETS, check_family, resolve_options  # noqa: F401 (re-exported)
from wordorder.models.rnn import build_rnn
from wordorder.models.transformer import build_transformer

# A family's constructor takes the options, the source (or joint) vocabulary size and the
# target vocabulary size.
FAMILIES: dict[str, Callable[[Any, int, int], Seq2SeqModel]] = {
    "transformer": build_transformer,
    "rnn": build_rnn,
}


def build_model(
    options: Mapping[str, Any] | ModelOptions, vocab_size: int, tgt_vocab_size: int | None = None
) -> Seq2SeqModel:
    """Build a freshly initialised model of the options' family.

    Args:
        options: a :class:`ModelOptions` or a dict of its fields plus an optional ``preset``.
        vocab_size: size of the source vocabulary, or of the joint one (ids 0..vocab_size-1).
        tgt_vocab_size: size of the target vocabulary when the sides have their own
            (``subword.joint: false``); None = the joint ``vocab_size``. Sides of different
            sizes cannot share an embedding matrix (``tie_embeddings: false``).
    """
    opts = resolve_options(options)
    tgt = vocab_size if tgt_vocab_size is None else int(tgt_vocab_size)
    for size in (vocab_size, tgt):
        if size <= 3:
            raise WordorderError(
                f"vocabulary size {size} is too small (the 4 special ids alone need 4)"
            )
    if opts.tie_embeddings and tgt != vocab_size:
        raise WordorderError(
            f"tie_embeddings shares one matrix between the source ({vocab_size}) and target "
            f"({tgt}) vocabularies, which differ",
            hint="set tie_embeddings: false",
        )
    return FAMILIES[opts.family](opts, vocab_size, tgt)
