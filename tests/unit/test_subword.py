"""Joint sentencepiece model: token boundaries, identity normalisation, word_index."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wordorder.errors import WordorderError
from wordorder.text.subword import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    UNK_ID,
    SubwordModel,
    encode_file,
    word_index,
)
from wordorder.text.subword_train import train_sentencepiece

EN_WORDS = "the cat sat on a mat and dog ran quickly over lazy brown fox unbelievable ,".split()
JA_WORDS = "猫 が マット の 上 に 座っ た 犬 は 速く 走る 。 東京 へ 行き ます Ａ ＢＣ".split()


def _corpus(seed: int, n: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    en = [" ".join(rng.choice(EN_WORDS) for _ in range(rng.randint(1, 12))) for _ in range(n)]
    ja = [" ".join(rng.choice(JA_WORDS) for _ in range(rng.randint(1, 12))) for _ in range(n)]
    return en, ja


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("spm_corpus")
    en, ja = _corpus(0, 300)
    (d / "train.en").write_text("\n".join(en) + "\n\n", encoding="utf-8")
    (d / "train.ja").write_text("\n".join(ja) + "\n", encoding="utf-8")
    return [d / "train.en", d / "train.ja"]


@pytest.fixture(scope="module")
def model(corpus_files, tmp_path_factory):
    prefix = tmp_path_factory.mktemp("spm") / "joint"
    path = train_sentencepiece(corpus_files, prefix, vocab_size=400)
    return SubwordModel(path)


def test_train_writes_model_vocab_and_is_quiet(corpus_files, tmp_path, capfd):
    prefix = tmp_path / "sub" / "m"
    path = train_sentencepiece(corpus_files, prefix, vocab_size=400)
    captured = capfd.readouterr()
    assert "trainer_interface" not in captured.err and "trainer_spec" not in captured.err
    assert path == tmp_path / "sub" / "m.model"
    assert path.is_file() and (tmp_path / "sub" / "m.vocab").is_file()
    assert "trainer_spec" in (tmp_path / "sub" / "m.log").read_text(encoding="utf-8")
    # no scratch files left behind
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["m.log", "m.model", "m.vocab"]


def test_training_is_deterministic(corpus_files, tmp_path):
    a = train_sentencepiece(corpus_files, tmp_path / "a", vocab_size=400, seed=7, max_sentences=250)
    vocab_a = (tmp_path / "a.vocab").read_bytes()
    model_a = a.read_bytes()
    b = train_sentencepiece(corpus_files, tmp_path / "a", vocab_size=400, seed=7, max_sentences=250)
    assert (tmp_path / "a.vocab").read_bytes() == vocab_a
    assert b.read_bytes() == model_a
    # in another folder (another checkout's results): the same bytes, which the run ledger's
    # input digests compare (sentencepiece would record the training paths in the model)
    c = train_sentencepiece(
        corpus_files, tmp_path / "other" / "a", vocab_size=400, seed=7, max_sentences=250
    )
    assert c.read_bytes() == model_a and str(tmp_path) not in model_a.decode("latin-1")


def test_small_vocab_is_raised_to_byte_fallback_minimum(corpus_files, tmp_path, caplog):
    # 4 specials + 256 byte pieces + the corpus characters do not fit in 200 entries
    path = train_sentencepiece(corpus_files, tmp_path / "v200", vocab_size=200)
    m = SubwordModel(path)
    assert m.vocab_size > 260
    assert any("minimum" in r.getMessage() for r in caplog.records)


def test_large_vocab_on_tiny_corpus_still_trains(corpus_files, tmp_path):
    m = SubwordModel(train_sentencepiece(corpus_files, tmp_path / "big", vocab_size=5000))
    assert 260 < m.vocab_size < 5000


def test_special_ids_are_fixed(model):
    assert (PAD_ID, UNK_ID, BOS_ID, EOS_ID) == (0, 1, 2, 3)
    assert [model.id_to_piece(i) for i in range(4)] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert model.piece_to_id("<pad>") == 0 and model.piece_to_id("</s>") == 3
    with pytest.raises(ValueError):
        model.id_to_piece(model.vocab_size)


def test_pieces_never_cross_tokens(model):
    en, ja = _corpus(1, 50)
    for line in en + ja + ["catdog matsat", "the ＢＣＡ"]:
        tokens = line.split()
        pieces = model.encode(tokens)
        starts = [p for p in pieces if p.startswith("▁")]
        assert len(starts) == len(tokens)
        idx = word_index(pieces)
        for w, tok in enumerate(tokens):
            group = [p for p, i in zip(pieces, idx) if i == w]
            assert "".join(group).lstrip("▁") == tok or model.decode_pieces(group) == [tok]


def test_identity_normalisation_keeps_full_width(model):
    pieces = model.encode(["Ａ", "ＢＣ", "cat"])
    assert model.decode_pieces(pieces) == ["Ａ", "ＢＣ", "cat"]
    assert "".join(pieces).replace("▁", "") == "ＡＢＣcat"  # no NFKC: Ａ is not turned into A
    assert model.piece_to_id("▁Ａ") != UNK_ID or model.piece_to_id("Ａ") != UNK_ID
    assert model.decode_ids(model.encode_ids(["Ａ"])) == ["Ａ"]


def test_byte_fallback_for_unseen_characters(model):
    tokens = ["Ω", "cat", "€uro", "😀"]
    ids = model.encode_ids(tokens)
    assert UNK_ID not in ids
    assert model.decode_ids(ids) == tokens
    assert any(p.startswith("<0x") for p in model.encode(tokens))


def test_decode_ids_drops_specials(model):
    ids = model.encode_ids(["the", "cat"])
    assert model.decode_ids([BOS_ID, *ids, EOS_ID, PAD_ID, PAD_ID]) == ["the", "cat"]
    assert model.decode_ids([]) == [] and model.decode_ids([PAD_ID, EOS_ID]) == []


def test_encode_rejects_bad_tokens(model):
    for bad in (["a b"], [""], ["▁x"]):
        with pytest.raises(WordorderError):
            model.encode(bad)
    assert model.encode([]) == [] and model.encode_ids([]) == []


def test_word_index_examples():
    assert word_index([]) == []
    assert word_index(["▁The", "▁un", "believ", "able", "▁cat"]) == [0, 1, 1, 1, 2]
    assert word_index(["▁", "<0xCE>", "<0xA9>", "▁cat"]) == [0, 0, 0, 1]
    assert word_index(["ab", "▁c"]) == [0, 1]


_token_chars = st.characters(
    blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"),
    blacklist_characters="▁\u2047",
)
_tokens = st.lists(
    st.one_of(
        st.sampled_from(EN_WORDS + JA_WORDS),
        st.text(alphabet=_token_chars, min_size=1, max_size=6),
    ).filter(lambda t: not any(ch.isspace() for ch in t)),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tokens=_tokens)
def test_word_index_properties(model, tokens):
    pieces = model.encode(tokens)
    idx = word_index(pieces)
    assert len(idx) == len(pieces)
    assert idx[0] == 0 and idx[-1] == len(tokens) - 1
    assert all(b - a in (0, 1) for a, b in zip(idx, idx[1:]))
    for w, tok in enumerate(tokens):
        group = [p for p, i in zip(pieces, idx) if i == w]
        assert model.decode_pieces(group) == [tok]
    assert model.decode_ids(model.encode_ids(tokens)) == list(tokens)


def test_encode_file_line_preserving(model, tmp_path):
    inp = tmp_path / "in.tok"
    lines = ["the cat sat", "", "猫 が  座っ た", "Ω", ""]
    inp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.sp"
    assert encode_file(inp, out, model, progress=False) == len(lines)
    got = out.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(got) == len(lines)
    assert got[1] == "" and got[4] == ""
    for src, enc in zip(lines, got):
        assert enc.split() == model.encode(src.split())


def test_encode_file_names_bad_line(model, tmp_path):
    inp = tmp_path / "in.tok"
    inp.write_text("ok\nbad ▁token\n", encoding="utf-8")
    with pytest.raises(WordorderError) as e:
        encode_file(inp, tmp_path / "o", model, progress=False)
    assert e.value.line == 2 and not (tmp_path / "o").exists()


def test_errors(tmp_path):
    with pytest.raises(WordorderError):
        SubwordModel(tmp_path / "nope.model")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(WordorderError, match="empty"):
        train_sentencepiece([empty], tmp_path / "m", vocab_size=100)
    with pytest.raises(WordorderError):
        train_sentencepiece([empty], tmp_path / "m", vocab_size=100, model_type="wordpiece")


# -- word-level models (model_type: word) ----------------------------------------------------


@pytest.fixture(scope="module")
def word_model(corpus_files, tmp_path_factory):
    """The 10 most frequent tokens of the corpus (and the specials) as a word vocabulary."""
    prefix = tmp_path_factory.mktemp("spm_word") / "words"
    return SubwordModel(train_sentencepiece(corpus_files, prefix, 14, model_type="word"))


def test_word_model_keeps_the_most_frequent_whole_tokens(word_model, corpus_files):
    from collections import Counter

    counts = Counter(t for f in corpus_files for t in f.read_text(encoding="utf-8").split())
    vocab = {word_model.id_to_piece(i) for i in range(4, word_model.vocab_size)}
    assert word_model.word_level and word_model.vocab_size == 14
    assert vocab == {"▁" + t for t, _ in counts.most_common(10)}


def test_word_model_maps_each_unknown_token_to_its_own_unk(word_model):
    known = word_model.id_to_piece(4)[1:]
    tokens = ["zebra", "unbelievablyunknown", known, "ＸＹＺ", "qq"]
    # sentencepiece alone merges neighbouring unknowns into one piece: 3 pieces for 5 tokens
    assert len(word_model._sp.encode(" ".join(tokens), out_type=str)) == 3
    assert word_model.encode(tokens) == ["▁" + t for t in tokens]
    assert word_model.encode_ids(tokens) == [UNK_ID, UNK_ID, 4, UNK_ID, UNK_ID]
    assert word_model.encode_batch([" ".join(tokens), ""], out_type=int) == [
        [UNK_ID, UNK_ID, 4, UNK_ID, UNK_ID],
        [],
    ]
    assert word_index(word_model.encode(tokens)) == [0, 1, 2, 3, 4]
    assert word_model.decode_ids([4, UNK_ID, 4]) == [known, "⁇", known]


def test_word_model_encode_file_and_read_ids(word_model, tmp_path):
    from wordorder.model_io.subwords import read_ids

    inp = tmp_path / "in.tok"
    inp.write_text("the zebra  sat\n\nΩ\n", encoding="utf-8")
    out = tmp_path / "out.sp"
    assert encode_file(inp, out, word_model, progress=False) == 3
    lines = out.read_text(encoding="utf-8").split("\n")[:-1]
    assert lines == ["▁the ▁zebra ▁sat", "", "▁Ω"]
    ids = read_ids(lines, word_model, out)
    assert ids == [word_model.encode_ids(line.split()) for line in ["the zebra sat", "", "Ω"]]
    assert ids[2] == [UNK_ID]


def test_bpe_models_are_not_word_level(model):
    assert not model.word_level
