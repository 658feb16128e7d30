# Shared definitions: the results root, wildcard constraints, and small input helpers.
import json
import re

from wordorder.config import (
    check_config,
    clean_options,
    apply_presets,
    load_variants,
    variant_model,
)
from wordorder.corpus.pairdata import is_holdout, pair_langs, split_names, split_extra_refs, split_spec
from wordorder.resources import gpus, mem_mb

VARIANTS = apply_presets(load_variants(config["variants_file"]), config["presets"])
check_config(config, VARIANTS, CONFIG_FILES)

R = f"{config['results']}/{config['experiment']}"  # results of this experiment
L = f"{config['logs']}/{config['experiment']}"  # logs of this experiment


def _one_of(names):
    return "|".join(re.escape(n) for n in names)


wildcard_constraints:
    pair=_one_of(config["pairs"]),
    variant=_one_of(config["variants"]),
    lang="[a-z]{2,3}",
    split="[A-Za-z0-9_]+",
    corpus="[A-Za-z0-9_]+",
    testset="[A-Za-z0-9_]+",
    seed=r"\d+",


def as_json(value):
    """Options travel to the CLI as one JSON argument (a change of them reruns the rule)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def src_lang(w):
    return pair_langs(w.pair)[0]


def tgt_lang(w):
    return pair_langs(w.pair)[1]


def testsets(pair):
    return list(config["data"][pair]["test"])


def fetched_corpora(pair):
    """Splits with a source of their own (holdouts are cut from the training corpus)."""
    data = config["data"][pair]
    return [s for s in split_names(data) if not is_holdout(split_spec(data, s))]


def corpus_of(w):
    spec = split_spec(config["data"][w.pair], w.split)
    return "train" if is_holdout(spec) else w.split


def extra_refs(w):
    """The prepared further references of a test set (NIST sets have four references in all)."""
    n = len(split_extra_refs(config["data"][w.pair], w.testset))
    return [f"{R}/data/{w.pair}/refs/{w.testset}.{i}.{tgt_lang(w)}" for i in range(1, n + 1)]


def reference_args(w, input):
    """--extra-ref per further reference, and --lowercase where the pair is scored case-insensitively."""
    args = [a for path in input.extra_refs for a in ("--extra-ref", path)]
    return args + (["--lowercase"] if w.pair in config["evaluation"]["case_insensitive"] else [])


def data_file(w, split, kind, side):
    """A split of the pair's data: kind is tok or bpe, side is src or tgt."""
    lang = src_lang(w) if side == "src" else tgt_lang(w)
    return f"{R}/data/{w.pair}/{split}.{kind}.{lang}"


def source_splits(pair):
    """Every split whose source side is parsed: train, dev and the test sets."""
    return ["train", "dev", *testsets(pair)]


def runs():
    """Every (pair, variant, seed) to train."""
    return [
        dict(pair=p, variant=v, seed=s)
        for p in config["pairs"]
        for v in config["variants"]
        for s in config["seeds"]
    ]


def baseline_variant():
    """The variant the others are tested against (evaluation.baseline, else the first)."""
    return config["evaluation"]["baseline"] or config["variants"][0]


def variant_entry(w):
    return VARIANTS[w.variant]


def model_options(w):
    """The variant's model options on the pair (registry, config model, data.<pair>.model)."""
    return variant_model(config, VARIANTS, w.variant, w.pair)


def spm_model(pair, lang):
    """The subword model of one side: the pair's joint model, or the side's own (subword.joint: false)."""
    return f"{R}/data/{pair}/spm.model" if config["subword"]["joint"] else f"{R}/data/{pair}/spm.{lang}.model"


def spm_inputs(w):
    """The subword models a model of the pair reads: {"spm": source (or joint), "spm_tgt": target}."""
    return {"spm": spm_model(w.pair, src_lang(w)), "spm_tgt": spm_model(w.pair, tgt_lang(w))}


def spm_tgt_arg(w):
    """The CLI arguments naming the target side's model: none for a joint model (a list, so that
    the shell command quotes each word: {params.spm_tgt:q})."""
    models = spm_inputs(w)
    return ["--spm-tgt", models["spm_tgt"]] if models["spm_tgt"] != models["spm"] else []


def variant_features(w, split):
    """The extra source inputs of a variant for one split: {name: file} (POS/BIEO tags of the
    syntax stage, preordered positions of the variant's preordering method)."""
    from wordorder.models.options import ModelOptions

    entry = variant_entry(w)
    model = {k: v for k, v in model_options(w).items() if k != "preset"}
    src = src_lang(w)
    files = {}
    for name in sorted(ModelOptions.from_dict(model).required_features()):
        if name == "order":
            files[name] = f"{R}/preorder/{w.pair}/{entry['preorder']}/{split}.positions.{src}"
        else:
            files[name] = f"{R}/data/{w.pair}/{split}.{name}.{src}"
    return files


def subword_only_variants(pair):
    """Variants whose only input is the original source subwords: a swapped source (swap noise)
    or a gold-alignment sentence (attention AER) is all they need; tags or preorder positions
    would have to be re-derived for such sentences."""
    from types import SimpleNamespace

    out = []
    for v in config["variants"]:
        w = SimpleNamespace(pair=pair, variant=v)
        if variant_entry(w).get("source", "original") == "original" and not variant_features(w, "test"):
            out.append(v)
    return out


def variant_source(w, split):
    """The subword source a variant reads: the pair's, or its preordered version."""
    entry = variant_entry(w)
    if entry.get("source", "original") == "preordered":
        return f"{R}/preorder/{w.pair}/{entry['preorder']}/{split}.bpe.{src_lang(w)}"
    return data_file(w, split, "bpe", "src")


def train_features(w):
    train = variant_features(w, "train")
    dev = variant_features(w, "dev")
    return {name: {"train": train[name], "dev": dev[name]} for name in train}
