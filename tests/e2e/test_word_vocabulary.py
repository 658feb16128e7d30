"""End-to-end: the tiny DAG with a word-level vocabulary (``subword.model_type: word``, as
Kawara et al. 2021 had it): one piece per token on every file the models read, unknown words
as ``<unk>``, and the preorder and word-position stages on top of it, up to the BLEU table."""

from __future__ import annotations

import pytest
import yaml
from dag import snakemake, tiny_config

from wordorder.model_io.subwords import read_ids
from wordorder.text.subword import UNK_ID, SubwordModel

pytestmark = pytest.mark.slow

# Kawara's relative RvNN preordering encoding (at the tiny preset: word positions, RvNN trees)
# and the BTG-preordered source: the word-position and both preorder stages on a word vocabulary
VARIANTS = ["kawara2021_relative_rvnn", "transformer_tiny_preordered"]


def test_word_vocabulary_runs_through_preorders_and_word_positions(repo, shared_data, tmp_path):
    config = tiny_config(repo, shared_data, tmp_path)
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings["variants"] = VARIANTS
    settings["subword"] = {"model_type": "word", "vocab_size": 300, "joint": False}
    settings["presets"] = {"transformer": "tiny"}
    settings["model"] = {"position_unit": "word", "tie_embeddings": False}
    for key in ("findings", "readme", "cross_paper"):  # they name systems this run leaves out
        settings["evaluation"].pop(key)
    settings["preorder"].update(methods=["btg", "rvnn"], positions="word")
    settings["train"].update(max_steps=10, eval_every=10)  # the stages, not the learning
    # one test set, parsed in one shard: test_pipeline covers a second test set and the shards
    settings["data"]["en-de"]["test"].pop("flickr2016")
    settings["syntax"]["shards"] = 1
    settings["evaluation"]["baseline"] = "transformer_tiny_preordered"
    config.write_text(yaml.safe_dump(settings, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "results" / "tiny"
    run = snakemake(
        repo, str(out / "tables" / "bleu.md"), "--cores", "2", "--configfile", str(config)
    )
    assert run.returncode == 0, run.stderr[-4000:]
    data = out / "data" / "en-de"
    for lang in ("en", "de"):
        sp = SubwordModel(data / f"spm.{lang}.model")
        assert sp.word_level and sp.vocab_size == 300
        tokens = (data / f"train.tok.{lang}").read_text(encoding="utf-8").splitlines()
        pieces = (data / f"train.bpe.{lang}").read_text(encoding="utf-8").splitlines()
        # one piece per token, the token itself behind the word mark
        assert [p.split() for p in pieces] == [["▁" + t for t in line.split()] for line in tokens]
        ids = read_ids(pieces, sp, data / f"train.bpe.{lang}")
        unknown = sum(i == UNK_ID for line in ids for i in line)
        assert 0 < unknown < sum(map(len, ids)) // 2  # 300 entries leave the rarer words out
    table = (out / "tables" / "bleu.md").read_text(encoding="utf-8")
    assert all(f"| {v} |" in table or f"{v} " in table for v in VARIANTS), table
    hyp = out / "translations" / "en-de" / "kawara2021_relative_rvnn" / "seed1" / "held.hyp"
    assert len(hyp.read_text(encoding="utf-8").splitlines()) == 30
