"""YAML files written by users (configs, the variant registry), read strictly and with lines.

PyYAML (and Snakemake's ``--configfile`` loader) keeps the last of two equal keys in a
mapping without a word: a test set defined twice, or a second ``clean:`` block, silently
replaces the first. :func:`read_yaml` refuses a repeated key, naming the file, the line of
the repeat, the key and where the first one is. It also records the line of every key and
list item, so that later checks (:class:`Locator`) can point at the line a value came from.

Aliases share one object, but whatever walks the data (jsonschema's error messages, a deep
copy, Snakemake's merge of config files) expands them: nine lists of nine aliases to the
previous one ("billion laughs") are a few hundred bytes and 387 million strings. So a file
whose aliases (and ``<<`` merges) would expand it beyond :data:`MAX_VALUES` values, or that
refers to itself, is refused before its data is built. A byte that is not UTF-8 is an error
naming its line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from wordorder.errors import WordorderError

MERGE_TAG = "tag:yaml.org,2002:merge"
# libyaml's parser where PyYAML was built with it; the same resolver and constructor
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Values (scalars, lists, mappings) a file may expand to through its aliases: the largest
# shipped config has a few thousand, a billion-laughs file hundreds of millions.
MAX_VALUES = 100_000
KeyPath = tuple  # of str keys and int list indices


@dataclass
class YamlDoc:
    """A YAML file's data and the 1-based line of each key path (``("data", "en-de", "test")``,
    ``("seeds", 1)``)."""

    path: Path
    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)


def read_yaml(path: str | Path) -> Any:
    """The data of a YAML file; a repeated mapping key or a syntax error is a
    :class:`WordorderError`."""
    return read_yaml_doc(path).data


def read_yaml_doc(path: str | Path) -> YamlDoc:
    path = Path(path)
    if not path.is_file():
        raise WordorderError("file not found", path=path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        column = e.start - raw.rfind(b"\n", 0, e.start)
        raise WordorderError(
            f"not UTF-8: byte 0x{raw[e.start]:02x} at column {column}",
            path=path,
            line=raw.count(b"\n", 0, e.start) + 1,
            hint="save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
        ) from None
    try:  # libyaml's parser (~10x faster: every command builds the DAG from these files)
        return _load(text, path, FAST_LOADER)
    except yaml.YAMLError:
        pass  # the pure-Python parser's message and line, as before (and its verdict)
    try:
        return _load(text, path, yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        raise WordorderError(
            f"not valid YAML: {getattr(e, 'problem', e)}", path=path, line=line
        ) from None


def _load(text: str, path: Path, loader_cls: Any) -> YamlDoc:
    loader = loader_cls(text)
    try:
        node = loader.get_single_node()
        doc = YamlDoc(path, None)
        if node is not None:
            _refuse_expansion(node, path)
            _walk(loader, node, (), doc, set())
            doc.data = loader.construct_document(node)
        return doc
    except RecursionError:
        raise WordorderError("not a config: nested too deeply", path=path) from None
    finally:
        loader.dispose()


def _refuse_expansion(root: yaml.Node, path: Path) -> None:
    """Refuse a document whose aliases expand it beyond :data:`MAX_VALUES` values or make it
    contain itself, naming the line of the list or mapping where that happens. Each node is
    counted once (its expanded size is remembered), so the check is as fast as the file is
    short, whatever the expansion."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        line = node.start_mark.line + 1
        if id(node) in open_nodes:
            raise WordorderError(
                "an alias refers to a list or mapping that contains it (a value without end)",
                path=path,
                line=line,
                hint="write the value out, or alias a part that does not contain the alias",
            )
        open_nodes.add(id(node))
        n = 1
        if isinstance(node, yaml.SequenceNode):
            n += sum(size(item) for item in node.value)
        elif isinstance(node, yaml.MappingNode):
            n += sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(id(node))
        if n > MAX_VALUES:
            raise WordorderError(
                f"aliases expand this value to {n:,} values (more than {MAX_VALUES:,}): a config "
                "needs no such structure (an alias bomb?)",
                path=path,
                line=line,
                hint="write the values out, or use fewer levels of aliases",
            )
        sizes[id(node)] = n
        return n

    size(root)


def _walk(
    loader: yaml.SafeLoader, node: yaml.Node, where: KeyPath, doc: YamlDoc, seen: set[int]
) -> None:
    """Record lines below ``node`` and refuse a key repeated in one mapping."""
    if id(node) in seen:  # an alias of a node walked already
        return
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            doc.lines.setdefault((*where, i), item.start_mark.line + 1)
            _walk(loader, item, (*where, i), doc, seen)
    elif isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:  # `<<: *base` overrides on purpose
                _walk(loader, value_node, where, doc, seen)
                continue
            key = _key(loader, key_node)
            line = key_node.start_mark.line + 1
            if key in first:
                inside = ".".join(str(k) for k in where) or "the top level"
                raise WordorderError(
                    f"duplicate key '{key}' in {inside} (first at line {first[key]}): YAML would "
                    "silently keep only the last one",
                    path=doc.path,
                    line=line,
                    hint="merge the two blocks into one, or delete the one you do not mean",
                )
            first[key] = line
            doc.lines[(*where, key)] = line
            _walk(loader, value_node, (*where, key), doc, seen)


def _key(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """A mapping key as YAML resolves it (so `1` and `0x1`, `yes` and `true` are equal keys)."""
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_object(node)
        try:
            hash(value)
            return value
        except TypeError:
            pass
    return (node.tag, repr(node.value))


class Locator:
    """Finds the file and line a config value came from, among the config files of a run.

    Later files override earlier ones (Snakemake merges ``--configfile`` files in order), so the
    last file whose own value at the key path equals the value given is the one named."""

    def __init__(self, docs: Iterable[YamlDoc] = ()) -> None:
        self.docs: Sequence[YamlDoc] = list(docs)

    def __call__(self, where: KeyPath, value: Any) -> tuple[str | None, int | None]:
        for doc in reversed(self.docs):
            found, own = _get(doc.data, where)
            if found and own == value and where in doc.lines:
                return str(doc.path), doc.lines[where]
        return None, None


def _get(data: Any, where: KeyPath) -> tuple[bool, Any]:
    for key in where:
        if isinstance(data, dict) and not isinstance(key, int) and key in data:
            data = data[key]
        elif isinstance(data, list) and isinstance(key, int) and key < len(data):
            data = data[key]
        else:
            return False, None
    return True, data
