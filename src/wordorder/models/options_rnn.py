"""The options of the RNN family (``family: rnn``): Bahdanau et al. 2015's RNNsearch, Nematus'
conditional GRU, Chen et al. 2018's attentions and Zhang et al. 2018's relation layers.

A module of its own beside :mod:`wordorder.models.options` (the Transformer's options and the
family table, which re-exports this class): the two families share only the common base,
:class:`~wordorder.models.options_base.ModelOptions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from wordorder.errors import WordorderError
from wordorder.models.options_base import ModelOptions

RNN_DECODERS = ("rnnsearch", "cgru")
RNN_ATTENTIONS = ("global", "local", "flexible", "syntax")
SECOND_CONTEXTS = ("none", "local", "flexible", "syntax", "sdr")


@dataclass
class RNNOptions(ModelOptions):
    """Options of the RNN family (``family: rnn``; Bahdanau et al. 2015, Chen et al. 2018,
    Zhang et al. 2018). d_model is the GRU state size (the encoder's annotations are
    2·d_model wide).

    Attributes:
        embed_dim: word embedding size (0 = d_model); the readout layer has this size too.
        attention_dim: width of the additive attention's hidden layer (0 = d_model; Nematus
            and dl4mt use the annotation width 2·d_model).
        output_dropout: dropout on the readout t, the input of the output layer; None = ``dropout``
            (Zhang et al. 2018 §5.2: 0.5 there and no dropout elsewhere).
        init_uniform: a > 0 draws every parameter from U(−a, a) (Zhang et al. 2018 §5.2: 0.1);
            0 keeps the layers' own initialisation.
        decoder: "rnnsearch" (Bahdanau: attention queried with s_{i−1}, GRU on [E y; c]) or
            "cgru" (Nematus' conditional GRU, "RNNsearch*").
        attention: the context of the decoder: "global" (Bahdanau), "local" (Luong local-p),
            "flexible" (Shu & Nakayama 2017, reconstructed) or "syntax" (Chen 2018's SDAtt).
        second_context: Chen 2018's double context (Eq. 14): a second context vector in the
            readout, from the same global scores ("local", "flexible", "syntax") or from a
            separate source-dependency encoder ("sdr", Chen et al. 2017's SDRNMT-2).
        source_dependency: Chen et al. 2017's SDRNMT-1: the CNN encoding of each word's
            dependency unit ⟨parent, siblings, children⟩ concatenated to its embedding.
        local_window, syntax_n, flexible_skip, unit_size (common options): D of local attention
            (σ = D/2); n of SDAtt (σ = n/2); flexible attention's test-time threshold on the
            penalty; M, slots of a dependency unit.
        relation_layers: Zhang 2018's RNMT encoder (GRUs and relation-network layers, dense
            concatenation); relation_width: the paper's "MLP units", width of the pair function
            g and of the output MLP f (Zh-En 256, En-De 128); relation_convs: the CNN layer as
            [[kernel width, channels], ...], parallel convolutions whose outputs are
            concatenated (None = [[1, w/2], [3, w]] with w = relation_width: the Zh-En
            [[1, 128], [3, 256]]; En-De [[3, 96]]); relation_chunk (common option): query rows
            per block of the graph propagation;
        relation_pad_quirk: average the pair function over the padded length, as the
            reference code does (default: over the real words).
    """

    family: str = "rnn"
    embed_dim: int = 0
    decoder: str = "cgru"
    attention: str = "global"
    second_context: str = "none"
    source_dependency: bool = False
    relation_layers: bool = False
    relation_pad_quirk: bool = False
    relation_width: int = 256
    relation_convs: list[list[int]] | None = None
    attention_dim: int = 0
    output_dropout: float | None = None
    init_uniform: float = 0.0

    def required_features(self) -> set[str]:
        """Source-side inputs besides the subword ids: the dependency tree (word, head)."""
        return {"word", "head"} if self.syntax_tree() else set()

    def relation_channels(self) -> list[tuple[int, int]]:
        """(kernel width, channels) of each convolution of a relation layer (Zhang 2018 §5.2)."""
        if self.relation_convs is None:
            w = self.relation_width
            return [(1, w // 2), (3, w)]
        return [(int(k), int(c)) for k, c in self.relation_convs]

    def syntax_tree(self) -> bool:
        """Whether the model reads the source dependency tree (the ``word``/``head`` inputs)."""
        return (
            self.attention == "syntax"
            or self.second_context in ("syntax", "sdr")
            or bool(self.source_dependency)
        )

    def validate(self) -> None:
        super().validate()
        self._integers(("relation_width",), ("embed_dim", "attention_dim"))
        if self.output_dropout is not None:
            self._fraction("output_dropout", self.output_dropout)
        if (
            not isinstance(self.init_uniform, (int, float))
            or isinstance(self.init_uniform, bool)
            or self.init_uniform < 0
        ):
            raise WordorderError(
                "model option init_uniform must be a non-negative number, "
                f"got {self.init_uniform!r}"
            )
        self._validate_relation()
        self._choice("decoder", RNN_DECODERS)
        self._choice("attention", RNN_ATTENTIONS)
        self._choice("second_context", SECOND_CONTEXTS)
        if self.attention != "global" and self.second_context != "none":
            raise WordorderError(
                "a double-context model (second_context) keeps the global attention as its first "
                "context (Chen et al. 2018, Eq. 14)",
                hint="set attention: global",
            )

    def _validate_relation(self) -> None:
        convs = self.relation_convs
        if convs is None:
            if self.relation_width < 2:
                raise WordorderError(
                    f"model option relation_width must be at least 2 (the convolution of width 1 "
                    f"has relation_width/2 channels), got {self.relation_width}"
                )
            return
        if (
            not isinstance(convs, (list, tuple))
            or not convs
            or any(
                not isinstance(c, (list, tuple))
                or len(c) != 2
                or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in c)
                for c in convs
            )
        ):
            raise WordorderError(
                f"model option relation_convs must be a non-empty list of [kernel width, channels] "
                f"with positive integers, got {convs!r}",
                hint="Zhang et al. 2018, En-De: [[3, 96]]",
            )
        if any(k % 2 == 0 for k, _ in convs):
            raise WordorderError(
                f"model option relation_convs: kernel widths must be odd (a window centred on "
                f"the word, Zhang et al. 2018 Eq. 7), got {convs!r}"
            )
