"""Strict YAML: a repeated key is an error with its line; merge keys still override on purpose;
the locator names the file and line a merged config value came from."""

from __future__ import annotations

import pytest

from wordorder.configfiles import check_repeats
from wordorder.errors import WordorderError
from wordorder.yamlfile import Locator, read_yaml, read_yaml_doc


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_repeated_key_deep_inside_names_its_line_and_the_first(tmp_path):
    path = write(
        tmp_path, "c.yaml", "data:\n  en-de:\n    test:\n      a: 1\n      b: 2\n      a: 3\n"
    )
    with pytest.raises(WordorderError) as e:
        read_yaml(path)
    assert (e.value.path, e.value.line) == (str(path), 6)
    assert "duplicate key 'a' in data.en-de.test (first at line 4)" in e.value.message


def test_keys_equal_as_yaml_values_are_repeats(tmp_path):
    # `yes` and `true` are both the boolean true in YAML 1.1 (what PyYAML and Snakemake read)
    with pytest.raises(WordorderError, match="duplicate key 'True'"):
        read_yaml(write(tmp_path, "c.yaml", "x:\n  yes: 1\n  true: 2\n"))


def test_merge_keys_and_aliases_are_not_repeats(tmp_path):
    text = "base: &b {max_len: 50, min_len: 1}\nclean:\n  <<: *b\n  max_len: 80\nagain: *b\n"
    doc = read_yaml_doc(write(tmp_path, "c.yaml", text))
    assert doc.data["clean"] == {"max_len": 80, "min_len": 1}
    assert doc.lines[("clean", "max_len")] == 4


def test_locator_names_the_last_file_that_sets_the_value(tmp_path):
    first = read_yaml_doc(write(tmp_path, "a.yaml", "seeds: [1, 2]\nvariants: [x]\n"))
    second = read_yaml_doc(write(tmp_path, "b.yaml", "\n\nseeds:\n  - 3\n  - 3\n"))
    locate = Locator([first, second])
    assert locate(("seeds", 1), 3) == (str(second.path), 5)
    assert locate(("variants", 0), "x") == (str(first.path), 2)
    assert locate(("variants", 0), "y") == (None, None)  # a value from --config: no file to name
    with pytest.raises(WordorderError, match=r"seeds: 3 is listed twice \(entries 1 and 2\)") as e:
        check_repeats({"seeds": [3, 3], "variants": ["x"]}, locate)
    assert (e.value.path, e.value.line) == (str(second.path), 5)
