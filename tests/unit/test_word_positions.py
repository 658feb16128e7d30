"""position_unit: word - the Transformer's own source positions (absolute encoding, Shaw's
distances) count words, the unit of Kawara et al. 2021 (no subwords, footnote 12) and of
``preorder.positions: word``. With no reordering (the identity preorder) the preordering
encodings read exactly the positions the original encodings then use, so both agree."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from wordorder.errors import WordorderError
from wordorder.model_io.batching import pad, pad_feature
from wordorder.models import build_model
from wordorder.preorder.permutation import word_positions
from wordorder.specials import EOS_ID
from wordorder.text.subword import word_index

VOCAB = 40
# id -> begins a word? (ids 0-3 are the specials, which count as word starts)
STARTS = [True] * 4 + [i % 3 != 0 for i in range(4, VOCAB)]
TINY = {"preset": "tiny", "dropout": 0.0}


def _pieces(ids: list[int]) -> list[str]:
    """The lines of pieces these ids stand for: ▁ marks the ids that begin a word."""
    return [("\u2581" if STARTS[i] else "") + f"p{i}" for i in ids]


def _batch() -> tuple[torch.Tensor, list[list[int]]]:
    rng = np.random.default_rng(0)
    lines = [[int(i) for i in rng.integers(4, VOCAB, size=n)] for n in (9, 5, 12)]
    for line in lines:
        line[0] = 5  # a word start (5 % 3 != 0), as every line's first piece is
    return pad([line + [EOS_ID] for line in lines]), lines


def _model(**options):
    torch.manual_seed(1)
    model = build_model({**TINY, **options}, VOCAB)
    if options.get("position_unit") == "word":
        model.set_word_starts(STARTS)
    return model.eval()


def _identity_order(lines: list[list[int]], width: int) -> torch.Tensor:
    """The ``order`` feature of the identity preorder in words, as the pipeline batches it."""
    wis = [word_index(_pieces(line)) for line in lines]
    orders = [
        word_positions(wi, np.arange(wi[-1] + 1)).tolist() for wi in wis
    ]  # preorder.positions: word
    return pad_feature("order", orders, width)


def test_source_words_are_word_index_of_the_pieces_and_eos_is_one_more():
    src, lines = _batch()
    words = _model(position_unit="word").source_words(src)
    for row, line in enumerate(lines):
        wi = word_index(_pieces(line))
        assert words[row, : len(line)].tolist() == wi
        assert int(words[row, len(line)]) == wi[-1] + 1  # EOS: a word of its own
    assert torch.equal(
        words.masked_fill(src.eq(0), 0), _identity_order(lines, src.size(1))
    )  # the identity preorder's word positions, EOS and padding included


def _memory(model, src, feats=None) -> torch.Tensor:
    with torch.no_grad():
        enc = model.encode(src, feats)
    return enc.memory.masked_fill(enc.src_pad[..., None], 0.0)


def test_absolute_encoding_by_word_equals_the_identity_preordering_encoding():
    src, lines = _batch()
    original = _model(position_unit="word")
    preorder = _model(positions="none", preorder_encoding="absolute")
    loaded = preorder.load_state_dict(original.state_dict(), strict=False)  # the same weights
    assert (loaded.missing_keys, loaded.unexpected_keys) == ([], ["word_start"])
    order = _identity_order(lines, src.size(1))
    assert torch.equal(_memory(original, src), _memory(preorder, src, {"order": order}))


def test_relative_encoding_by_word_equals_the_identity_relative_preordering_encoding():
    src, lines = _batch()
    original = _model(
        position_unit="word", positions="none", relative_k=4, relative_sides="encoder"
    )
    preorder = _model(positions="none", preorder_encoding="relative", preorder_k=4)
    state = {
        k.replace(".relative.", ".preorder_relative."): v for k, v in original.state_dict().items()
    }
    loaded = preorder.load_state_dict(state, strict=False)  # the same weights and tables
    assert (loaded.missing_keys, loaded.unexpected_keys) == ([], ["word_start"])
    order = _identity_order(lines, src.size(1))
    assert torch.equal(_memory(original, src), _memory(preorder, src, {"order": order}))


def test_word_units_change_the_encoding_and_subword_units_stay_the_default():
    src, _ = _batch()
    by_piece = _model(relative_k=4)
    by_word = _model(relative_k=4, position_unit="word")
    assert by_piece.options.position_unit == "subword"
    assert "word_start" not in by_piece.state_dict()  # checkpoints of subword models unchanged
    assert "position_unit" not in by_piece.options.to_dict()  # and so are their fingerprints
    assert by_word.options.to_dict()["position_unit"] == "word"
    by_word.load_state_dict({**by_piece.state_dict(), "word_start": by_word.word_start})
    assert not torch.equal(_memory(by_piece, src), _memory(by_word, src))
    # every piece a word of its own: the word positions are the piece positions
    by_word.set_word_starts([True] * VOCAB)
    assert torch.equal(_memory(by_piece, src), _memory(by_word, src))


def test_word_starts_must_be_set_and_conflicting_options_are_refused():
    model = build_model({**TINY, "position_unit": "word"}, VOCAB)
    with pytest.raises(WordorderError, match="was not told which subwords begin one"):
        model.encode(_batch()[0])
    with pytest.raises(WordorderError, match="word-start flags for a source vocabulary of 40"):
        model.set_word_starts([True] * 3)
    with pytest.raises(WordorderError, match="position_unit must be one of subword, word"):
        build_model({**TINY, "position_unit": "char"}, VOCAB)
    with pytest.raises(WordorderError, match="position slot add subword"):
        build_model({**TINY, "position_unit": "word", "reordering_embeddings": "encoder"}, VOCAB)


def test_word_starts_of_a_subword_model_match_word_index(tmp_path):
    from wordorder.model_io.subwords import word_starts
    from wordorder.text.subword import SubwordModel
    from wordorder.text.subword_train import train_sentencepiece

    text = tmp_path / "train.txt"
    words = "the cat sat on a mat unbelievable quickly lazy brown fox , .".split()
    rng = np.random.default_rng(0)
    text.write_text(
        "\n".join(" ".join(rng.choice(words, size=8)) for _ in range(200)) + "\n", "utf-8"
    )
    sp = SubwordModel(train_sentencepiece([text], tmp_path / "spm", vocab_size=300))
    flags = word_starts(sp)
    tokens = "unbelievable cats sat quickly on mats .".split()
    pieces = sp.encode(tokens)
    ids = [sp.piece_to_id(p) for p in pieces]
    assert len(pieces) > len(tokens)  # some words are split
    model = build_model({**TINY, "position_unit": "word"}, sp.vocab_size)
    model.set_word_starts(flags)
    words_of = model.source_words(torch.tensor([ids + [EOS_ID]]))[0].tolist()
    assert words_of == word_index(pieces) + [len(tokens)]


def test_training_sets_the_word_starts_and_the_checkpoint_keeps_them(tmp_path):
    """Through the train step (and its step-decay schedule): the trained model numbers words
    with its vocabulary's marks, and the decoder of the checkpoint reads them back."""
    from wordorder.model_io.checkpoint import load_model
    from wordorder.model_io.subwords import word_starts
    from wordorder.text.subword import SubwordModel
    from wordorder.text.subword_train import train_sentencepiece
    from wordorder.train.runner import run_training

    words = "ab cd efg hij kl mnop q rs".split()
    src = [" ".join(words[(i + k) % 8] for k in range(3)) for i in range(40)]
    (tmp_path / "text").write_text("\n".join(src) + "\n", encoding="utf-8")
    spm = train_sentencepiece([tmp_path / "text"], tmp_path / "spm", vocab_size=40)
    sp = SubwordModel(spm)
    pieces = [" ".join(sp.encode(line.split())) for line in src]
    files = {}
    for name, lines in (
        ("train.src", pieces),
        ("train.tgt", pieces),
        ("dev.src", pieces[:4]),
        ("dev.ref", src[:4]),
    ):
        files[name] = tmp_path / name
        files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = tmp_path / "out" / "best.pt"
    run_training(
        files["train.src"],
        files["train.tgt"],
        files["dev.src"],
        files["dev.ref"],
        spm,
        {**TINY, "position_unit": "word", "relative_k": 2},
        {
            "device": "cpu",
            "batch_tokens": 60,
            "max_steps": 2,
            "eval_every": 2,
            "schedule": "step_decay",
            "warmup": 0,
            "decay_start": 2,
            "decay_every": 1,
        },
        seed=1,
        threads=1,
        output=output,
    )
    model, _ = load_model(output)
    flags = word_starts(sp)
    assert model.word_start.tolist() == [int(f) for f in flags] and not all(flags)
