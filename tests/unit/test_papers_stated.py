"""What each paper states, as data (docs/stated/<paper>.yaml), held against its full configs
(configs/full/) and the departures table of docs/papers.md.

Each entry of a ``stated`` list is a value the paper gives (section, short quote, the quote found
in the paper's text under ../shared/papers); ``open`` lists what it leaves open, with the
toolkit's default where the paper names a toolkit (``default: <option>`` of
docs/stated/opennmt_py_1.0.0.yaml); ``other`` lists differences outside the config's keys
(toolkits, tools, data releases, systems not run). The rules:

* a config value equal to what the paper states needs no row; one that differs carries
  ``ours`` (the config's value, checked) and ``departure`` (the "what" cell of its row);
* ``ours`` equal to the paper's value is a stale entry; a departure naming no row fails;
* an open value that differs from the toolkit's default needs a row the same way;
* every row of a paper's departures table is named by at least one entry (a stale row fails).

Keys: a dotted path into the config as the pipeline loads it (schema defaults filled; a
``train.*`` key the config leaves out reads the trainer's default), or
``model.<option>`` (every system's resolved options; ``systems`` / ``pairs`` narrow the set,
which must agree on one value), or a ``derived.*`` value computed below.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from wordorder.config import apply_presets, load_config, load_variants, variant_model
from wordorder.models.registry import resolve_options

REPO = Path(__file__).resolve().parents[2]
STATED = REPO / "docs" / "stated"
PAPERS_TEXT = REPO.parent / "shared" / "papers"
PAPER_FILES = sorted(p for p in STATED.glob("*.yaml") if p.stem not in ("opennmt_py_1.0.0", "all"))
TOOLKIT = STATED / "opennmt_py_1.0.0.yaml"
MISSING = object()


def read_yaml(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


@cache
def loaded(stem: str) -> tuple[dict, dict]:
    """The config of configs/full/<stem>.yaml and ``{(pair, variant): resolved options}``."""
    config = load_config(REPO / "configs" / "full" / f"{stem}.yaml")
    variants = apply_presets(load_variants(REPO / config["variants_file"]), config["presets"])
    systems = {
        (pair, name): resolve_options(variant_model(config, variants, name, pair))
        for pair in config["pairs"]
        for name in config["variants"]
    }
    return config, systems


def _test_sets(config: dict, pair: str) -> list[str]:
    """Each test set as the paper names it: a sacreBLEU set, else the file stem of its source."""
    out = []
    for spec in config["data"][pair]["test"].values():
        out.append(spec["test_set"] if spec["kind"] == "sacrebleu" else _stem(spec))
    return out


def _stem(spec: dict) -> str:
    if spec["kind"] == "sacrebleu":
        return spec["test_set"]
    if "src" in spec:
        return Path(spec["src"]).name.split(".")[0]
    return spec.get("name", "?")


DERIVED: dict[str, Callable[[dict, dict, str], Any]] = {
    # batch_tokens x accum_steps: tokens per update
    "tokens_per_update": lambda c, s, a: c["train"]["batch_tokens"] * c["train"]["accum_steps"],
    "test_sets": lambda c, s, a: _test_sets(c, a),
    "dev_set": lambda c, s, a: _stem(c["data"][a]["dev"]),
    "references": lambda c, s, a: sorted(
        {1 + len(t.get("extra_refs", [])) for t in c["data"][a]["test"].values()}
    ),
    "group_heads": lambda c, s, a: dict(s[next(k for k in s if k[1] == a)].group_heads()),
    "relation_kernels": lambda c, s, a: [k for k, _ in s[a, "zhang2018_rnmt"].relation_channels()],
}


Loader = Callable[[str], tuple[dict, dict]]


def value_of(stem: str, entry: dict, load: Loader = loaded) -> Any:
    """The config's value of an entry's key (MISSING where the config has no such key)."""
    config, systems = load(stem)
    key = entry["key"]
    if key.startswith("derived."):
        name, _, arg = key.removeprefix("derived.").partition(":")
        return DERIVED[name](config, systems, arg)
    if key.startswith("model."):
        option = key.removeprefix("model.")
        chosen = {
            (pair, name): getattr(o, option)
            for (pair, name), o in systems.items()
            if re.fullmatch(entry.get("systems", ".*"), name)
            and re.fullmatch(entry.get("pairs", ".*"), pair)
        }
        assert chosen, f"{stem}: {key} selects no system"
        values = {repr(v) for v in chosen.values()}
        assert len(values) == 1, f"{stem}: {key} differs between systems: {chosen}"
        return next(iter(chosen.values()))
    node: Any = config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _train_default(key)
        node = node[part]
    return node


def _train_default(key: str) -> Any:
    """A ``train.*`` key the config leaves out: the trainer's default (TrainOptions)."""
    from dataclasses import fields

    from wordorder.train.options import TrainOptions

    name = key.removeprefix("train.")
    found = [f.default for f in fields(TrainOptions) if key.startswith("train.") and f.name == name]
    return list(found[0]) if found and isinstance(found[0], tuple) else (found or [MISSING])[0]


def normalised(text: str) -> str:
    """Lower case, hyphenated line breaks joined, every run of whitespace one space."""
    text = re.sub(r"-\s*\n\s*", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


@cache
def paper_text(name: str) -> str:
    return normalised((PAPERS_TEXT / name).read_text(encoding="utf-8"))


def departures(title: str) -> list[str]:
    """The "what" cells of the departures table under the heading ``### <title>``."""
    return [row[0] for row in _section_rows(title)]


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` is a pipe inside a cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def same(a: Any, b: Any) -> bool:
    """Equal as YAML writes them (1 and 1.0 the same number, tuples as lists)."""
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return bool(a == b)


def problems(
    doc: dict, toolkit: dict, rows: list[str] | None = None, load: Loader = loaded
) -> list[str]:
    """Every rule a paper's file breaks, one line each (empty when it holds)."""
    out: list[str] = []
    own = departures(doc["section"]) if rows is None else rows
    # "all: <what>" names a row of the "All papers" table
    known = set(own) | {f"all: {r}" for r in departures("All papers")}
    named: set[str] = set()
    for kind in ("stated", "open"):
        for e in doc.get(kind, []):
            where = f"{kind} {e['key']}"
            if "departure" in e:
                named.add(e["departure"])
                if e["departure"] not in known:
                    out.append(f"{where}: departure {e['departure']!r} is no row of the table")
            reference, whose = e.get("paper", MISSING) if kind == "stated" else MISSING, "the paper"
            if kind == "open" and "default" in e:
                reference, whose = toolkit[e["default"]]["value"], "the toolkit's default"
            for stem in e.get("configs", doc["configs"]):
                value = value_of(stem, e, load)
                if value is MISSING:
                    out.append(f"{where}: configs/full/{stem}.yaml has no such key")
                    continue
                if "ours" in e and not same(value, e["ours"]):
                    out.append(f"{where}: {stem} has {value!r}, the file says ours = {e['ours']!r}")
                if reference is MISSING:
                    continue
                if same(value, reference) and "ours" in e:
                    out.append(f"{where}: ours equals {whose}, {reference!r}: a stale entry")
                if not same(value, reference) and not ("departure" in e and "ours" in e):
                    out.append(
                        f"{where}: {stem} has {value!r}, {whose} {reference!r} "
                        f"({e.get('where')}), and no departures row names it (ours + departure)"
                    )
    for e in doc.get("other", []):
        named.add(e["departure"])
        if e["departure"] not in known:
            out.append(f"other: departure {e['departure']!r} is no row of the table")
    out += [f"row {r!r} of {doc['section']!r} is named by no entry" for r in own if r not in named]
    return out


@pytest.mark.parametrize("path", PAPER_FILES, ids=[p.stem for p in PAPER_FILES])
def test_config_follows_the_paper_or_a_row_says_why(path):
    assert problems(read_yaml(path), read_yaml(TOOLKIT)) == []


@pytest.mark.parametrize("path", PAPER_FILES, ids=[p.stem for p in PAPER_FILES])
def test_every_quote_is_in_the_paper(path):
    doc = read_yaml(path)
    text = paper_text(doc["text"])
    entries = [e for kind in ("stated", "open", "other") for e in doc.get(kind, [])]
    for e in entries:
        for field in ("key", "where") if "key" in e else ("departure",):
            assert e.get(field), (path.name, e)
    quoted = [e for e in doc.get("stated", []) + doc.get("other", []) if "quote" in e]
    assert all("quote" in e for e in doc.get("stated", [])), path.name
    missing = [e["quote"] for e in quoted if normalised(e["quote"]) not in text]
    assert missing == [], f"{path.name}: quotes not found in {doc['text']}"


def test_all_papers_rows_are_named():
    doc = read_yaml(STATED / "all.yaml")
    rows = departures(doc["section"])
    assert sorted(e["departure"] for e in doc["other"]) == sorted(rows)


def test_the_rules_catch_a_drift_a_stale_entry_a_lost_row_and_a_stale_row():
    """The checker itself: a stated value changed in the config, an entry whose ``ours`` the
    paper states, a departure whose row is gone and a row no entry names are each reported."""
    toolkit = read_yaml(TOOLKIT)
    doc = read_yaml(STATED / "kawara2021.yaml")
    rows = departures(doc["section"])
    assert problems(doc, toolkit, rows) == []
    agreed = next(e for e in doc["stated"] if "ours" not in e and e["key"].startswith("train."))
    drifted = {**doc, "stated": doc["stated"] + [{**agreed, "paper": "not the config's"}]}
    assert any("no departures row names it" in p for p in problems(drifted, toolkit, rows))
    stale = {**doc, "stated": doc["stated"] + [{**agreed, "ours": value_of("kawara2021", agreed)}]}
    assert any("stale entry" in p for p in problems(stale, toolkit, rows))
    gone = problems(doc, toolkit, [r for r in rows if r != "batches"])
    assert any("'batches' is no row" in p for p in gone)
    extra = problems(doc, toolkit, rows + ["a row nobody names"])
    assert extra == [
        "row 'a row nobody names' of 'Kawara et al. 2021 (preordering encoding)' "
        "is named by no entry"
    ]


def _section_rows(title: str) -> list[list[str]]:
    text = (REPO / "docs" / "papers.md").read_text(encoding="utf-8")
    at = text.index(f"\n### {title}\n", text.index("## Departures from the papers"))
    end = text.find("\n#", at + 1)
    return [
        cells(line)
        for line in text[at : end if end >= 0 else len(text)].splitlines()
        if line.startswith("|") and not line.startswith(("|---", "| what"))
    ]


def test_every_departures_row_says_what_why_and_what_it_changes():
    """Every row of each departures table has its five cells (what, paper, here, why, expected
    effect), none empty or a bare dash, and no two rows of a table share their "what"."""
    titles = [read_yaml(STATED / "all.yaml")["section"]]
    titles += [read_yaml(p)["section"] for p in PAPER_FILES]
    assert len(titles) == 6
    for title in titles:
        rows = _section_rows(title)
        assert rows, title
        for cells in rows:
            assert len(cells) == 5, (title, cells[0])
            assert all(c and c not in ("—", "-") for c in cells), (title, cells[0])
        whats = [cells[0] for cells in rows]
        assert len(whats) == len(set(whats)), title


@pytest.mark.parametrize("path", PAPER_FILES, ids=[p.stem for p in PAPER_FILES])
def test_removing_any_row_or_changing_any_stated_value_fails(path):
    """The mutations the rules exist for, each on every row and every stated config value: a row
    taken out of the table (its entries then name no row), and a config value the paper states
    changed (it then matches neither the paper nor ``ours``)."""
    doc, toolkit = read_yaml(path), read_yaml(TOOLKIT)
    rows = departures(doc["section"])
    for row in rows:
        assert problems(doc, toolkit, [r for r in rows if r != row]), f"{path.stem}: {row}"
    plain = [e for e in doc["stated"] if not e["key"].startswith(("model.", "derived."))]
    assert plain, path.stem
    for entry in plain:
        for stem in entry.get("configs", doc["configs"]):

            def changed(name: str, entry: dict = entry, stem: str = stem) -> tuple[dict, dict]:
                config, systems = loaded(name)
                if name != stem:
                    return config, systems
                config = copy.deepcopy(config)
                node = config
                *parents, last = entry["key"].split(".")
                for part in parents:
                    node = node.setdefault(part, {})
                node[last] = "a value no paper states"
                return config, systems

            single = {**doc, "stated": [entry], "open": [], "other": []}
            found = problems(single, toolkit, rows, changed)
            assert any(entry["key"] in p for p in found), (path.stem, stem, entry["key"])
