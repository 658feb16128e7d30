"""Each full config (configs/full/) against its paper: the values a paper's sections and tables
fix, written once here next to the section that states them, checked on the config as the
pipeline loads it (the schema's defaults filled in, every variant's model options resolved on
every pair: registry entry, size preset, the config's and the pair's ``model``). A config that
drifts from its paper fails here; what we chose where a paper is silent is in docs/papers.md,
"Departures from the papers", whose rows this file also checks for completeness."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from wordorder.config import apply_presets, load_config, load_variants, variant_model
from wordorder.models.registry import resolve_options

REPO = Path(__file__).resolve().parents[2]


def loaded(stem: str, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    """The config and ``{(pair, variant): resolved model options}`` of every system."""
    monkeypatch.chdir(REPO)
    config = load_config(REPO / "configs" / "full" / f"{stem}.yaml")
    variants = apply_presets(load_variants(config["variants_file"]), config["presets"])
    systems = {
        (pair, name): resolve_options(variant_model(config, variants, name, pair))
        for pair in config["pairs"]
        for name in config["variants"]
    }
    return config, systems


def references_of(config: dict, pair: str) -> dict[str, int]:
    """Test set name -> number of references."""
    return {
        name: 1 + len(spec.get("extra_refs", []))
        for name, spec in config["data"][pair]["test"].items()
    }


def sacrebleu_set(config: dict, pair: str, split: str, name: str | None = None) -> str:
    spec = config["data"][pair][split] if name is None else config["data"][pair][split][name]
    assert spec["kind"] == "sacrebleu"
    return spec["test_set"]


def all_of(systems: dict, **expected: Any) -> None:
    for key, o in systems.items():
        for name, value in expected.items():
            assert getattr(o, name) == value, (key, name)


def test_chen2018(monkeypatch):
    config, systems = loaded("chen2018", monkeypatch)
    train, ev = config["train"], config["evaluation"]
    # §4.1: WMT14 en-de (newstest2012 dev, 2013-2015 test); LDC zh-en, NIST02 dev, NIST03-08 test
    assert sacrebleu_set(config, "en-de", "dev") == "wmt12"
    assert [sacrebleu_set(config, "en-de", "test", t) for t in config["data"]["en-de"]["test"]] == [
        "wmt13",
        "wmt14/full",
        "wmt15",
    ]
    assert config["data"]["zh-en"]["dev"]["src"].endswith("mt02.zh")
    # §4.2: case-insensitive 4-gram NIST BLEU on the four references (its sign test, per run,
    # is replaced by the run-level test: papers.md's departures)
    assert references_of(config, "zh-en") == {
        t: 4 for t in ("mt03", "mt04", "mt05", "mt06", "mt08")
    }
    assert set(ev["case_insensitive"]) == {"zh-en", "en-de"} and ev["bleu_brevity"] == "shortest"
    assert "test" not in ev["significance"]  # no per-run sentence test is configured any more
    # §4.2: vocabularies of 50K a side, sentences up to 80, ~400k mini-batches, beam 12
    assert (config["subword"]["vocab_size"], config["subword"]["joint"]) == (50000, False)
    assert config["clean"]["max_len"] == 80
    assert train["max_steps"] == 400_000 and config["decode"]["beam_size"] == 12
    # §4.2: Nematus, embeddings 620, hidden 1000, its default dropout (0.2), own output matrix
    all_of(systems, family="rnn", embed_dim=620, d_model=1000, dropout=0.2, tie_embeddings=False)
    all_of(systems, tie_output=False)
    # §3 (Eq. 6, footnote 1): local window D = 10; §3.2: SDAtt's syntax distance n = 4
    all_of(systems, local_window=10, syntax_n=4)


def test_zhang2018(monkeypatch):
    config, systems = loaded("zhang2018", monkeypatch)
    train, ev = config["train"], config["evaluation"]
    # §5.1: NIST02 dev (878), MT03-06 test; WMT17 newstest2014 dev, 2015-2017 test
    assert config["data"]["zh-en"]["dev"]["src"].endswith("mt02.zh")
    assert references_of(config, "zh-en") == {t: 4 for t in ("mt03", "mt04", "mt05", "mt06")}
    assert sacrebleu_set(config, "en-de", "dev") == "wmt14/full"
    assert [sacrebleu_set(config, "en-de", "test", t) for t in config["data"]["en-de"]["test"]] == [
        "wmt15",
        "wmt16",
        "wmt17",
    ]
    # §5.1: NIST and WMT17 case-insensitive (only WMT16, not run, is cased)
    assert set(ev["case_insensitive"]) == {"zh-en", "en-de"} and ev["bleu_brevity"] == "shortest"
    # Table 1: significance after Collins et al. 2005 (the sign test, per run): the run-level
    # test replaces it (papers.md's departures)
    assert "test" not in ev["significance"]
    # §5.2: 50 tokens, 30K vocabulary a side, embeddings and states 512, U(-0.1, 0.1), dropout
    # 0.5 on the output layer only, beam 10
    assert config["clean"]["max_len"] == 50
    assert (config["subword"]["vocab_size"], config["subword"]["joint"]) == (30000, False)
    all_of(systems, family="rnn", embed_dim=512, d_model=512, init_uniform=0.1)
    all_of(systems, dropout=0.0, output_dropout=0.5, tie_embeddings=False)
    assert config["decode"]["beam_size"] == 10
    # Eq. 5: the output layer W_v is a matrix of its own
    all_of(systems, tie_output=False)
    # §5.2: RNMT's MLPs 256 (Zh-En) / 128 (En-De); convolutions k = 1, 3 (Zh-En), k = 3 (En-De)
    rnmt = {pair: systems[pair, "zhang2018_rnmt"] for pair in config["pairs"]}
    assert rnmt["zh-en"].relation_width == 256 and rnmt["en-de"].relation_width == 128
    assert [k for k, _ in rnmt["zh-en"].relation_channels()] == [1, 3]
    assert [k for k, _ in rnmt["en-de"].relation_channels()] == [3]
    # Eq. 13: RNNsearch* is the cGRU decoder, RNNsearch Bahdanau's
    assert systems["zh-en", "zhang2018_rnnsearch_star"].decoder == "cgru"
    assert systems["zh-en", "zhang2018_rnnsearch"].decoder == "rnnsearch"
    assert train["max_steps"] >= 200_000


@pytest.mark.parametrize("stem", ["chen2019", "chen2020"])
def test_chen2019_and_chen2020(stem, monkeypatch):
    config, systems = loaded(stem, monkeypatch)
    train, ev = config["train"], config["evaluation"]
    # 2019 §6.1 / 2020 §V-A: WMT14 en-de, newstest2013 dev, newstest2014 test
    assert sacrebleu_set(config, "en-de", "dev") == "wmt13"
    assert [sacrebleu_set(config, "en-de", "test", t) for t in config["data"]["en-de"]["test"]] == [
        "wmt14/full"
    ]
    nist = (
        ("mt02", "mt03", "mt04", "mt05", "mt08") if stem == "chen2019" else ("mt03", "mt04", "mt05")
    )
    assert config["data"]["zh-en"]["dev"]["src"].endswith("mt06.zh")
    assert references_of(config, "zh-en") == {t: 4 for t in nist}
    # 2019 §6.3 / 2020 §V-B: BPE 32K, 512/2048/8 heads, 4096x4 tokens, label smoothing 0.1,
    # attention and residual dropout 0.1 (big: Vaswani et al.'s 0.3), warm-up 8,000, validated
    # every 1,000 batches, 200k batches, the best dev BLEU, beam 4, the sign test
    assert config["subword"]["vocab_size"] == 32000
    assert train["batch_tokens"] * train["accum_steps"] == 4096 * 4
    assert (train["label_smoothing"], train["warmup"], train["schedule"]) == (0.1, 8000, "noam")
    assert (train["eval_every"], train["max_steps"], train.get("best_by", "bleu")) == (
        1000,
        200_000,
        "bleu",
    )
    assert config["decode"]["beam_size"] == 4 and "test" not in ev["significance"]
    for (_pair, name), o in systems.items():
        big = o.d_model == 1024
        assert (o.d_ff, o.heads, o.dropout) == ((4096, 16, 0.3) if big else (2048, 8, 0.1)), name
        assert (o.encoder_layers, o.decoder_layers, o.attention_dropout) == (6, 6, 0.1), name
        # OpenNMT-py: ReLU dropout is its `dropout` (position_ffn.py); 0.1 on every row here
        assert o.activation_dropout == 0.1 and not o.tie_embeddings, name
    # 2019: multi-bleu.perl / sacreBLEU (closest length); 2020: tokenized case-sensitive BLEU
    assert ev["bleu_brevity"] == "closest" and ev["case_insensitive"] == []
    if stem == "chen2020":
        # §V-B and Table I: d_r = d_l = 128 (2 heads), d_s = 192 (3 heads), kernel m = 5
        groups = {n: dict(systems["en-de", n].group_heads()) for n in config["variants"]}
        assert groups["chen2020_rec_diverse"]["rec"] == groups["chen2020_loc_diverse"]["loc"] == 2
        assert groups["chen2020_syn_diverse"]["syn"] == 3
        assert systems["en-de", "chen2020_loc_diverse"].loc_kernel == 5


# OpenNMT-py's defaults (onmt/opts.py of v1.0.0, commit 1fd9d6df; 0.9.2 to 2.0.0 agree on
# these), the values Kawara et al. 2021 §V-C leave to the toolkit it names
OPENNMT_PY = {
    "dropout": 0.3,
    "attention_dropout": 0.1,
    "label_smoothing": 0.0,
    "adam_beta2": 0.999,
    "adam_eps": 1e-9,  # onmt/utils/optimizers.py
    "learning_rate_decay": 0.5,
    "max_grad_norm": 5.0,
    "valid_steps": 10000,
    "beam_size": 5,
}


@pytest.mark.parametrize("stem", ["kawara2021", "kawara2021_clipping"])
def test_kawara2021(stem, monkeypatch):
    config, systems = loaded(stem, monkeypatch)
    train, pre = config["train"], config["preorder"]
    # §V-A: sentences up to 50 words, length ratio up to 9
    assert (config["clean"]["max_len"], config["clean"]["max_ratio"]) == (50, 9)
    if stem == "kawara2021":
        # §V-A: eight directions; ASPEC, WMT15 (newstest2014 dev, newstest2015 test)
        assert len(config["pairs"]) == 8
        for pair in ("en-de", "de-en", "en-cs", "cs-en", "en-ru", "ru-en"):
            assert sacrebleu_set(config, pair, "dev") == "wmt14/full"
            assert sacrebleu_set(config, pair, "test", "newstest2015") == "wmt15"
    # §V-B: BTG 20 iterations on 100k sentences, 256 word classes; RvNN 5 epochs, batches of 500,
    # a 50k vocabulary and 200-wide embeddings
    assert (pre["btg"]["iterations"], pre["btg"]["max_sentences"]) == (20, 100_000)
    assert pre["word_classes"]["classes"] == 256
    rvnn = pre["rvnn"]
    assert (rvnn["epochs"], rvnn["batch_size"], rvnn["vocab_size"], rvnn["embed"]) == (
        5,
        500,
        50000,
        200,
    )
    # footnote 12: words, no subwords - preordered positions and the model's own in words
    assert pre["positions"] == "word"
    # §V-C: 6 layers, d_e = d_z = 512, 8 heads, k = 4 for the relative and preordering encodings
    all_of(systems, d_model=512, heads=8, encoder_layers=6, decoder_layers=6, position_unit="word")
    for (_pair, name), o in systems.items():
        assert o.relative_k == (int(name[-1]) if name[-2:] in ("k1", "k2", "k8") else 4), name
        if o.preorder_encoding != "none":
            assert o.preorder_k == o.relative_k, name
    # §V-C: Adam 0.001, decayed every 10k after 50k, 250k iterations, minimum dev perplexity
    # (Table I too), three runs averaged (§V-D)
    assert (train["lr"], train["schedule"], train["decay_start"], train["decay_every"]) == (
        0.001,
        "step_decay",
        50_000,
        10_000,
    )
    assert (train["max_steps"], train["best_by"], config["seeds"]) == (
        250_000,
        "perplexity",
        [1, 2, 3],
    )
    # the rest: OpenNMT-py's defaults
    all_of(
        systems,
        dropout=OPENNMT_PY["dropout"],
        attention_dropout=OPENNMT_PY["attention_dropout"],
        activation_dropout=OPENNMT_PY["dropout"],  # position_ffn.py: dropout after the ReLU
        # decoders/transformer.py of v1.0.0: the decoder self-attention drops at `dropout`
        decoder_self_attention_dropout=OPENNMT_PY["dropout"],
        norm="pre",  # encoders/transformer.py: LayerNorm before each sublayer
        tie_embeddings=False,  # share_embeddings off
        tie_output=False,  # share_decoder_embeddings off
    )
    assert train["label_smoothing"] == OPENNMT_PY["label_smoothing"]
    assert tuple(train["betas"]) == (0.9, OPENNMT_PY["adam_beta2"])
    assert train["eps"] == OPENNMT_PY["adam_eps"]
    assert train["decay_factor"] == OPENNMT_PY["learning_rate_decay"]
    assert train["warmup"] == 0  # decay_method none has no warm-up
    assert train["clip_norm"] == OPENNMT_PY["max_grad_norm"]
    assert train["eval_every"] == OPENNMT_PY["valid_steps"]
    assert config["decode"]["beam_size"] == OPENNMT_PY["beam_size"]
    assert config["decode"]["length_penalty"] == 0.0  # translate.py: length_penalty none
    assert config["subword"]["joint"] is False  # share_vocab off: a vocabulary per side


def test_every_departures_row_says_what_why_and_what_it_changes():
    """docs/papers.md, "Departures from the papers": every row has its five cells (what, paper,
    here, why, expected effect), none of them empty or a bare dash."""
    text = (REPO / "docs" / "papers.md").read_text(encoding="utf-8")
    start = text.index("## Departures from the papers")
    after = text.find("\n## ", start + 1)  # the next section, or the end of the page
    section = text[start : after if after >= 0 else len(text)]
    papers = re.findall(r"^### (.+)$", section, flags=re.M)
    assert len(papers) == 6  # all papers, then the five
    rows = [
        line
        for line in section.splitlines()
        if line.startswith("|") and not line.startswith(("|---", "| what"))
    ]
    assert len(rows) > 60
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 5, line[:80]
        assert all(c and c not in ("—", "-") for c in cells), line[:80]
