"""Config values refused before the first job (issue 37, cases 4, 9 and 11), through the real
``wordorder check-config``: one ``error:`` line naming the key (and the file, and its line where
the file itself is at fault), exit status 2. The same checks run when Snakemake builds the DAG
(tests/e2e/test_config_refused.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from cli_checks import check, run

from wordorder.config import SCHEMA_DIR

REPO = Path(__file__).resolve().parents[2]


def default_config() -> dict:
    return yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))


def check_config(tmp_path: Path, capsys, config: dict | str) -> tuple[Path, int, list[str]]:
    path = tmp_path / "config.yaml"
    if isinstance(config, dict):
        config = yaml.safe_dump(config)
    path.write_text(config, encoding="utf-8")
    code, errors = run(["check-config", "--config", path], capsys)
    return path, code, errors


def number_fields() -> list[tuple]:
    """The key path of every number of the config schema (list items as index 0; a mapping of
    names, such as data's pairs, as the name a config would give)."""
    schema = yaml.safe_load((SCHEMA_DIR / "config.schema.yaml").read_text(encoding="utf-8"))
    names = {"data": "en-ja", "test": "bible", "parsers": "en"}
    found: list[tuple] = []

    def walk(node: dict, where: tuple) -> None:
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        types = node.get("type", [])
        if "number" in (types if isinstance(types, list) else [types]):
            found.append(where)
        for name, sub in node.get("properties", {}).items():
            walk(sub, (*where, name))
        if isinstance(node.get("items"), dict):
            walk(node["items"], (*where, 0))
        if isinstance(node.get("additionalProperties"), dict) and where[-1:] != ("model",):
            walk(node["additionalProperties"], (*where, names.get(where[-1], "x")))
        for sub in node.get("oneOf", []):
            walk(sub, where)

    walk(schema, ())
    return sorted(set(found))


def put(config: dict, where: tuple, value) -> None:
    for key, nxt in zip(where, where[1:]):
        if isinstance(key, int):
            while len(config) <= key:
                config.append({})
            config = config[key]
        else:
            config = config.setdefault(key, [] if isinstance(nxt, int) else {})
    if isinstance(where[-1], int):
        config[:] = [value]
    else:
        config[where[-1]] = value


def test_every_number_field_is_found():
    fields = number_fields()
    assert ("train", "lr") in fields and ("decode", "max_len_a") in fields
    assert ("train", "betas", 0) in fields and (
        "evaluation",
        "findings",
        0,
        "paper_delta",
    ) in fields
    assert ("data", "en-ja", "clean", "max_ratio") in fields and len(fields) > 20


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("where", [*number_fields(), ("model", "dropout")], ids=str)
def test_non_finite_numbers_are_refused_everywhere(where, value, tmp_path, capsys, monkeypatch):
    """Case 4 (and lr: .nan of case 11): jsonschema takes .inf and .nan as numbers, and NaN
    passes every bound."""
    monkeypatch.chdir(REPO)
    config = default_config()
    put(config, where, value)
    _, code, errors = check_config(tmp_path, capsys, config)
    key = ".".join(map(str, where))
    name = "non-finite number" if where == ("train", "lr") and value != value else None
    assert code == 2 and len(errors) == 1, errors
    assert f"invalid config at '{key}': {value!r} is not a finite number" in errors[0]
    if name:  # one row for the bad-input table (docs/reliability.md)
        check(f"`{key}: .nan` (any {name})", code, errors, key)


def _bad(config: dict, where: tuple, value) -> dict:
    put(config, where, value)
    return config


@pytest.mark.parametrize(
    "case, change, must",
    [
        ("betas: [2, -1]", ("train", "betas"), [2, -1]),
        ("eps: -1", ("train", "eps"), -1),
        ("seeds: [2**70]", ("seeds",), [2**70]),
        ("split_seed: -1", ("split_seed",), -1),
        ("swap_noise seed -1", ("evaluation", "swap_noise", "seed"), -1),
        ("results: -out", ("results",), "-out"),
        ("logs: -l", ("logs",), "-l"),
        ("experiment named by 300 characters", ("experiment",), "e" * 300),
        ("variant named by 300 characters", ("variants",), ["v" * 300]),
    ],
)
def test_values_refused_by_the_schema(case, change, must, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    _, code, errors = check_config(tmp_path, capsys, _bad(default_config(), change, must))
    key = ".".join(map(str, change)) + (".0" if isinstance(must, list) else "")
    if case == "betas: [2, -1]":
        key = "train.betas.0"
    check(case, code, errors, f"invalid config at '{key}'")


def test_test_set_named_by_300_characters(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    config = default_config()
    config["data"]["en-ja"]["test"] = {"t" * 300: {"holdout": 1000}}
    _, code, errors = check_config(tmp_path, capsys, config)
    check("test set named by 300 characters", code, errors, "'data.en-ja.test'", "up to 100")


@pytest.mark.parametrize(
    "case, model, must",
    [
        (
            "model: {heads: 512} on a 256-wide preset (fine at the default width, 512)",
            {"heads": 512},
            ["variant 'transformer_small' on en-ja", "d_model=256", "heads=512"],
        ),
        (
            "model: {heads: 3}: the preset's d_model quoted",
            {"heads": 3},
            ["variant 'transformer_small' on en-ja", "d_model=256", "heads=3"],
        ),
    ],
)
def test_model_options_with_the_variants_preset(case, model, must, tmp_path, capsys, monkeypatch):
    """Checked as training builds them: the registry entry with its preset (small: d_model 256),
    then the config's model."""
    monkeypatch.chdir(REPO)
    config = default_config()
    config["model"] = model
    _, code, errors = check_config(tmp_path, capsys, config)
    check(case, code, errors, *must)


def test_a_latin1_byte_in_a_config_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    text = (REPO / "configs" / "default.yaml").read_bytes().replace(b"demo", b"d\xe9mo", 1)
    path = tmp_path / "config.yaml"
    path.write_bytes(text)
    line = text[: text.index(b"\xe9")].count(b"\n") + 1
    code, errors = run(["check-config", "--config", path], capsys)
    check(
        "a Latin-1 byte in a config file", code, errors, f"{path}:{line}:", "not UTF-8: byte 0xe9"
    )


def test_a_latin1_byte_in_the_registry(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    registry = tmp_path / "variants.yaml"
    registry.write_bytes(
        (REPO / "configs" / "variants.yaml").read_bytes().replace(b"Vaswani", b"V\xe4swani", 1)
    )
    config = default_config()
    config["variants_file"] = str(registry)
    _, code, errors = check_config(tmp_path, capsys, config)
    check("a Latin-1 byte in the registry", code, errors, f"{registry}:", "not UTF-8")


def billion_laughs(levels: int = 9) -> str:
    """``experiment:`` as nine levels of nine aliases of the level below: 387 million strings."""
    value = "&a0 [" + ", ".join(["lol"] * 9) + "]"
    for k in range(1, levels):
        value = f"&a{k} [{value}, " + ", ".join([f"*a{k - 1}"] * 8) + "]"
    return f"experiment: {value}\n"


def mapping_bomb(levels: int = 9) -> str:
    """Mappings of nine aliases each: a deep copy or a merge of config files expands them."""
    lines = ["m0: &m0 {" + ", ".join(f"k{i}: lol" for i in range(9)) + "}"]
    for k in range(1, levels):
        lines.append(f"m{k}: &m{k} {{" + ", ".join(f"k{i}: *m{k - 1}" for i in range(9)) + "}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "case, text, line, must",
    [
        ("billion laughs in a string field", billion_laughs(), 1, ["aliases expand this value"]),
        ("nested mappings of aliases", mapping_bomb(), 5, ["aliases expand this value"]),
        ("a list that contains itself", "experiment: &a [1, *a]\n", 1, ["refers to a list"]),
        ("merge keys of merge keys", None, 5, ["aliases expand this value"]),
    ],
)
def test_alias_bombs_are_refused_at_once(case, text, line, must, tmp_path, capsys, monkeypatch):
    """Case 9: refused while the file is read, before jsonschema (whose error message would
    print the whole expansion) or anything else walks it."""
    monkeypatch.chdir(REPO)
    if text is None:  # each level merges the one below into nine keys
        rows = ["b0: &b0 {" + ", ".join(f"x{i}: lol" for i in range(9)) + "}"]
        for k in range(1, 9):
            keys = ", ".join(f"y{i}: {{<<: *b{k - 1}}}" for i in range(9))
            rows.append(f"b{k}: &b{k} {{{keys}}}")
        text = "\n".join(rows) + "\n"
    start = time.perf_counter()
    path, code, errors = check_config(
        tmp_path,
        capsys,
        text + (REPO / "configs" / "default.yaml").read_text(encoding="utf-8").split("\n", 4)[4],
    )
    assert time.perf_counter() - start < 5
    check(case, code, errors, f"{path}:{line}:" if line else str(path), *must)


def test_a_configs_own_aliases_and_merges_still_load(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    text = (REPO / "configs" / "default.yaml").read_text(encoding="utf-8")
    text = text.replace("clean:\n", "base: &base {max_len: 50}\nclean:\n  <<: *base\n", 1)
    path = tmp_path / "config.yaml"
    path.write_text(text.replace("base: &base", "x_base: &base", 1), encoding="utf-8")
    code, errors = run(["check-config", "--config", path], capsys)
    assert errors and "x_base" in errors[0]  # an unknown key, so the aliases were read through


@pytest.mark.parametrize("key", ["results", "logs"])
def test_a_root_that_is_a_file(key, tmp_path, capsys, monkeypatch):
    """Case 12: Snakemake's first look at the outputs stopped with NotADirectoryError."""
    monkeypatch.chdir(REPO)
    (tmp_path / "afile").write_text("x\n", encoding="utf-8")
    config = default_config()
    config[key] = str(tmp_path / "afile")
    _, code, errors = check_config(tmp_path, capsys, config)
    check(
        f"{key}: a file",
        code,
        errors,
        f"{key}: {tmp_path / 'afile'} must be a folder, but {tmp_path / 'afile'} is a file",
    )


def test_the_retired_per_run_significance_test_is_refused_not_ignored(tmp_path, capsys):
    # evaluation.significance.test chose a per-run sentence test that no table reads any more:
    # a config that asks for it is told so instead of being silently run with another test
    config = default_config()
    config.setdefault("evaluation", {})["significance"] = {"test": "sign"}
    _, code, errors = check_config(tmp_path, capsys, config)
    assert code == 2 and len(errors) == 1
    assert "evaluation.significance" in errors[0] and "'test'" in errors[0]
