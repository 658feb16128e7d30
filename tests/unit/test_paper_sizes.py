"""Every system of every full-scale config (configs/full/*.yaml) builds at its paper's size, with
the vocabulary sizes of that config, and its number of parameters matches the paper's table where
the paper gives one.

The models are built on the meta device (shapes only, no memory), so all of them take seconds.
A row of ``PAPER_PARAMS`` must be within 3 % of the paper's figure, or carry a written reason and
the wider bound that reason allows (so a drift is still caught). Rows of systems the paper does
not size are only built.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest
import torch

from wordorder.config import apply_presets, load_config, load_variants, variant_model

REPO = Path(__file__).resolve().parents[2]
FULL = sorted((REPO / "configs" / "full").glob("*.yaml"))

# Tag vocabularies as the syntax stage makes them (3 specials + UPOS, BIEO, UD relations); they
# size only the tag embeddings (a few thousand parameters).
FEATURE_SIZES = {"pos": 21, "bieo": 7, "dep": 41}


class Paper(NamedTuple):
    millions: float
    where: str
    reason: str = ""
    bound: float = 0.03  # relative; wider only with a reason


# Chen et al. 2019 and 2020 report the base and big rows of en-de with all three embedding
# matrices untied (OpenNMT-py's default) but contradict themselves: 97.6M / 97.35M for base
# leaves (97.6 - 44.1) / 0.512 = 104.5k embedding rows of width 512, 272.8M / 272.6M for big
# (272.8 - 176.4) / 1.024 = 94.2k rows of width 1024. Three matrices of the stated 32k give 96k
# rows: the big rows match within 1.5 %, the base rows are 3.4-5.0 % short.
EN_DE_BASE = (
    "the paper's en-de base rows imply 104.5k embedding rows, its big rows 94.2k: no one "
    "vocabulary fits both; three 32k matrices (96k rows) match the big rows"
)
JA_EN = (
    "Table 3's ja-en rows imply ~58k embedding rows (29k per side with the output tied to the "
    "target embedding), below the stated 32k, so ours are 2-4 % larger"
)
ZH_EN_BIG_RES = (
    "Table 2 adds 25.0M for big +Both_REs, Tables 1 and 3 add 35.4M and 39.1M for the same "
    "layers (12 × 3 × 1024² = 37.7M): the zh-en figure is the odd one"
)

PAPER_PARAMS: dict[tuple[str, str, str], Paper] = {
    # Chen et al. 2019, Table 1 (WMT14 en-de)
    ("chen2019", "en-de", "transformer_base"): Paper(97.6, "Table 1", EN_DE_BASE, 0.05),
    ("chen2019", "en-de", "chen2019_additional_pe"): Paper(97.6, "Table 1", EN_DE_BASE, 0.05),
    ("chen2019", "en-de", "chen2019_relative_pe"): Paper(97.6, "Table 1", EN_DE_BASE, 0.05),
    ("chen2019", "en-de", "chen2019_encoder_res"): Paper(102.1, "Table 1", EN_DE_BASE, 0.05),
    ("chen2019", "en-de", "chen2019_decoder_res"): Paper(102.1, "Table 1", EN_DE_BASE, 0.05),
    ("chen2019", "en-de", "chen2019_both_res"): Paper(106.8, "Table 1", EN_DE_BASE, 0.05),
    ("chen2019", "en-de", "transformer_big"): Paper(272.8, "Table 1"),
    ("chen2019", "en-de", "chen2019_big_both_res"): Paper(308.2, "Table 1"),
    # Table 2 (NIST zh-en)
    ("chen2019", "zh-en", "transformer_base"): Paper(78.3, "Table 2"),
    ("chen2019", "zh-en", "chen2019_additional_pe"): Paper(78.3, "Table 2"),
    ("chen2019", "zh-en", "chen2019_relative_pe"): Paper(78.3, "Table 2"),
    ("chen2019", "zh-en", "chen2019_encoder_res"): Paper(83.0, "Table 2"),
    ("chen2019", "zh-en", "chen2019_decoder_res"): Paper(83.0, "Table 2"),
    ("chen2019", "zh-en", "chen2019_both_res"): Paper(87.6, "Table 2"),
    ("chen2019", "zh-en", "transformer_big"): Paper(244.7, "Table 2"),
    ("chen2019", "zh-en", "chen2019_big_both_res"): Paper(269.7, "Table 2", ZH_EN_BIG_RES, 0.05),
    # Table 3 (WAT ASPEC ja-en)
    ("chen2019", "ja-en", "transformer_base"): Paper(73.9, "Table 3", JA_EN, 0.05),
    ("chen2019", "ja-en", "chen2019_pre_reordering"): Paper(73.9, "Table 3", JA_EN, 0.05),
    ("chen2019", "ja-en", "chen2019_additional_pe"): Paper(73.9, "Table 3", JA_EN, 0.05),
    ("chen2019", "ja-en", "chen2019_relative_pe"): Paper(73.9, "Table 3", JA_EN, 0.05),
    ("chen2019", "ja-en", "chen2019_encoder_res"): Paper(78.6, "Table 3", JA_EN, 0.05),
    ("chen2019", "ja-en", "chen2019_decoder_res"): Paper(78.6, "Table 3", JA_EN, 0.05),
    ("chen2019", "ja-en", "chen2019_both_res"): Paper(84.4, "Table 3"),
    ("chen2019", "ja-en", "transformer_big"): Paper(234.6, "Table 3", JA_EN, 0.05),
    ("chen2019", "ja-en", "chen2019_big_both_res"): Paper(273.7, "Table 3"),
    # Chen et al. 2020, Table II (WMT14 en-de)
    ("chen2020", "en-de", "transformer_base"): Paper(97.35, "Table II", EN_DE_BASE, 0.05),
    ("chen2020", "en-de", "chen2020_disreg"): Paper(97.35, "Table II", EN_DE_BASE, 0.05),
    ("chen2020", "en-de", "chen2020_rel_pe"): Paper(97.35, "Table II", EN_DE_BASE, 0.05),
    ("chen2020", "en-de", "chen2020_disan"): Paper(97.39, "Table II", EN_DE_BASE, 0.05),
    ("chen2020", "en-de", "chen2020_linguistic_features"): Paper(
        97.35,
        "Table II",
        EN_DE_BASE + "; the word embedding is d_model minus the 25 factor dimensions wide",
        0.06,
    ),
    ("chen2020", "en-de", "chen2020_rec_diverse"): Paper(97.88, "Table II", EN_DE_BASE, 0.05),
    ("chen2020", "en-de", "chen2020_loc_diverse"): Paper(97.35, "Table II", EN_DE_BASE, 0.05),
    ("chen2020", "en-de", "chen2020_syn_diverse"): Paper(97.35, "Table II", EN_DE_BASE, 0.05),
    ("chen2020", "en-de", "chen2020_fusing_diverse"): Paper(97.88, "Table II", EN_DE_BASE, 0.05),
    ("chen2020", "en-de", "transformer_big"): Paper(272.6, "Table II"),
    ("chen2020", "en-de", "chen2020_big_fusing_diverse"): Paper(274.2, "Table II"),
    # Table III (NIST zh-en)
    ("chen2020", "zh-en", "transformer_base"): Paper(77.9, "Table III"),
    ("chen2020", "zh-en", "chen2020_disreg"): Paper(77.9, "Table III"),
    ("chen2020", "zh-en", "chen2020_rel_pe"): Paper(77.9, "Table III"),
    ("chen2020", "zh-en", "chen2020_disan"): Paper(78.3, "Table III"),
    ("chen2020", "zh-en", "chen2020_linguistic_features"): Paper(78.3, "Table III"),
    ("chen2020", "zh-en", "chen2020_rec_diverse"): Paper(78.0, "Table III"),
    ("chen2020", "zh-en", "chen2020_loc_diverse"): Paper(77.9, "Table III"),
    ("chen2020", "zh-en", "chen2020_syn_diverse"): Paper(77.9, "Table III"),
    ("chen2020", "zh-en", "chen2020_fusing_diverse"): Paper(78.1, "Table III"),
    ("chen2020", "zh-en", "transformer_big"): Paper(243.7, "Table III"),
    ("chen2020", "zh-en", "chen2020_big_fusing_diverse"): Paper(245.3, "Table III"),
}

# Papers without a #params table: their systems are only built (test above).
NO_TABLE = {
    "chen2018": "Chen et al. 2018 report no parameter counts",
    "kawara2021": "Kawara et al. 2021 report no parameter counts",
    "kawara2021_clipping": "Kawara et al. 2021 report no parameter counts",
    "zhang2018": (
        "Zhang et al. 2018 report only a difference (RNMT has 4.1M more than RNNsearch* on En-De)"
    ),
}

_BUILT: dict[str, int] = {}
_SYSTEMS: dict[Path, tuple[dict, dict[tuple[str, str], int]]] = {}


def count_on_meta(options: dict, src_vocab: int, tgt_vocab: int) -> int:
    """Parameters of the model (tied matrices once), built on the meta device."""
    from wordorder.models.registry import build_model, resolve_options

    needs = resolve_options(dict(options)).required_features()
    sizes = {name: FEATURE_SIZES[name] for name in needs if name in FEATURE_SIZES}
    options = {**options, "feature_sizes": sizes}
    key = json.dumps([options, src_vocab, tgt_vocab], sort_keys=True)
    if key not in _BUILT:
        with torch.device("meta"):
            model = build_model(options, src_vocab, tgt_vocab)
        assert all(p.device.type == "meta" for p in model.parameters())
        _BUILT[key] = sum(p.numel() for p in model.parameters())
    return _BUILT[key]


def paper_systems(path: Path, monkeypatch) -> tuple[dict, dict[tuple[str, str], int]]:
    """The config and the parameter count of each (pair, variant) it trains."""
    monkeypatch.chdir(REPO)
    if path in _SYSTEMS:
        return _SYSTEMS[path]
    config = load_config(path)
    variants = apply_presets(load_variants(config["variants_file"]), config["presets"])
    # sentencepiece gives exactly this on a full corpus
    vocab = int(config["subword"]["vocab_size"])
    counts = {}
    for pair in config["pairs"]:
        for name in config["variants"]:
            counts[pair, name] = count_on_meta(
                variant_model(config, variants, name, pair), vocab, vocab
            )
    _SYSTEMS[path] = config, counts
    return config, counts


@pytest.mark.parametrize("path", FULL, ids=lambda p: p.stem)
def test_every_system_builds_at_its_paper_size(path, monkeypatch):
    """Each system has the sizes of the config's preset for its family (or of its own preset
    with keep_preset), except what the entry or the config's model options set explicitly."""
    from wordorder.models.registry import PRESETS, resolve_options

    config, counts = paper_systems(path, monkeypatch)
    assert len(counts) == len(config["pairs"]) * len(config["variants"])
    registry = load_variants(REPO / config["variants_file"])
    variants = apply_presets(registry, config["presets"])
    for pair, name in counts:
        entry = registry[name]
        family = entry["model"].get("family", "transformer")
        preset = entry["model"]["preset"] if entry.get("keep_preset") else config["presets"][family]
        model = variant_model(config, variants, name, pair)
        explicit = (
            set(entry["model"])
            | set(config["model"])
            | set(config["data"][pair].get("model") or {})
        )
        resolved = resolve_options(model)
        for key, value in PRESETS[preset].items():
            if key not in explicit:
                assert getattr(resolved, key) == value, (pair, name, key)


@pytest.mark.parametrize("path", FULL, ids=lambda p: p.stem)
def test_parameters_match_the_papers_tables(path, monkeypatch):
    rows = {k: v for k, v in PAPER_PARAMS.items() if k[0] == path.stem}
    if not rows:
        assert path.stem in NO_TABLE, (
            f"record {path.stem}'s #params in PAPER_PARAMS, or why there are none"
        )
        pytest.skip(NO_TABLE[path.stem])
    config, counts = paper_systems(path, monkeypatch)
    report = []
    for (_, pair, name), paper in rows.items():
        assert (pair, name) in counts, (
            f"{paper.where} row {pair} {name} is not a system of {path.name}"
        )
        assert paper.bound == 0.03 or paper.reason, "a bound wider than 3 % needs a written reason"
        ours = counts[pair, name] / 1e6
        error = ours / paper.millions - 1
        report.append(
            f"{pair} {name}: ours {ours:.2f}M, {paper.where} "
            f"{paper.millions}M ({100 * error:+.1f} %)"
        )
        assert abs(error) <= paper.bound, "\n".join(report)


def test_chen2020_table_one_splits_at_eight_heads(monkeypatch):
    """Table I: the full config's *_Diverse systems get 6+2, 6+2, 5+3 and 2+2+2+2 of 8 heads
    (128/128/192/128-dimensional feature groups), the big row 4 of 16 heads per group."""
    from wordorder.models.registry import resolve_options

    monkeypatch.chdir(REPO)
    config = load_config(REPO / "configs" / "full" / "chen2020.yaml")
    variants = apply_presets(load_variants(config["variants_file"]), config["presets"])

    def groups(name):
        return resolve_options(variant_model(config, variants, name, "en-de")).group_heads()

    assert groups("chen2020_rec_diverse") == [("global", 6), ("rec", 2)]
    assert groups("chen2020_loc_diverse") == [("global", 6), ("loc", 2)]
    assert groups("chen2020_syn_diverse") == [("global", 5), ("syn", 3)]
    assert groups("chen2020_fusing_diverse") == [("global", 2), ("rec", 2), ("loc", 2), ("syn", 2)]
    assert groups("chen2020_big_fusing_diverse") == [
        ("global", 4),
        ("rec", 4),
        ("loc", 4),
        ("syn", 4),
    ]
    assert (
        resolve_options(variant_model(config, variants, "chen2020_syn_diverse", "en-de")).head_dim
        * 3
        == 192
    )


@pytest.mark.parametrize("stem", ["chen2019", "chen2020"])
def test_chen_full_configs_train_as_the_papers_state(stem, monkeypatch):
    """§6.3 / §V-B: attention and residual dropout 0.1 (big: Vaswani et al.'s 0.3), 32k BPE, Adam
    with 8,000 warm-up steps of Vaswani et al.'s schedule (peak d^-0.5 · 8000^-0.5), beam 4."""
    from wordorder.models.registry import resolve_options
    from wordorder.train.schedule import peak_lr

    monkeypatch.chdir(REPO)
    config = load_config(REPO / "configs" / "full" / f"{stem}.yaml")
    variants = apply_presets(load_variants(config["variants_file"]), config["presets"])
    train = config["train"]
    assert (train["schedule"], train["lr"], train["warmup"]) == ("noam", 1.0, 8000)
    assert peak_lr(train["lr"], train["warmup"], train["schedule"], 512) == pytest.approx(
        4.94e-4, rel=1e-3
    )
    assert (
        train["batch_tokens"] * train["accum_steps"] == 4096 * 4 and train["max_steps"] == 200_000
    )
    assert train["eval_every"] == 1000 and config["decode"]["beam_size"] == 4 == train["eval_beam"]
    assert config["subword"] == {**config["subword"], "vocab_size": 32000, "joint": False}
    for pair in config["pairs"]:
        for name in config["variants"]:
            o = resolve_options(variant_model(config, variants, name, pair))
            assert o.attention_dropout == 0.1 and o.dropout == (
                0.3 if o.d_model == 1024 else 0.1
            ), (pair, name)
            assert not o.tie_embeddings
    if stem == "chen2020":  # Table II-III's Rel_PE row: Shaw et al. on the encoder only
        o = resolve_options(variant_model(config, variants, "chen2020_rel_pe", "en-de"))
        assert o.relative_on("encoder") and not o.relative_on("decoder") and o.relative_k == 16
