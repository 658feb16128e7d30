# Alignment and preordering: eflomal alignments of all splits together, then per split and
# method (gold, btg, rvnn) one permutation per line, its projection onto the model inputs,
# and the preorder_quality table (Kendall tau, FRS) of every pair.

PREORDER = config["preorder"]
METHODS = PREORDER["methods"]


wildcard_constraints:
    method="gold|btg|rvnn",


def tok_files(w, side):
    lang = src_lang(w) if side == "src" else tgt_lang(w)
    return [f"{R}/data/{w.pair}/{s}.tok.{lang}" for s in source_splits(w.pair)]


def align_gold(pair):
    return config["data"][pair].get("align_gold")


def align_gold_args(w, input):
    """The gold set's CLI arguments, a list (one shell word each, quoted by {params.gold:q})."""
    gold = align_gold(w.pair)
    if not gold:
        return []
    return ["--gold-pairs", input.gold[0], "--gold-links", input.gold[1]] + (["--gold-swap"] if gold.get("swap") else [])


rule align:
    input:
        src=lambda w: tok_files(w, "src"),
        tgt=lambda w: tok_files(w, "tgt"),
        gold=lambda w: [align_gold(w.pair)[k] for k in ("pairs", "links")] if align_gold(w.pair) else [],
    output:
        joint=f"{R}/data/{{pair}}/align/joint.align",
        stats=f"{R}/data/{{pair}}/align/stats.json",
    log:
        f"{L}/align/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    benchmark:
        f"{R}/benchmarks/align/{{pair}}.tsv"
    params:
        splits=lambda w: source_splits(w.pair),
        opts=as_json(config["align"]),
        seed=config["split_seed"],
        gold=align_gold_args,
    threads: config["threads"]["align"]
    resources:
        mem_mb=mem_mb("align"),
    shell:
        "wordorder align --src {input.src:q} --tgt {input.tgt:q} --splits {params.splits:q} {params.gold:q}"
        " --options {params.opts:q} --seed {params.seed:q} --output {output.joint:q} --stats {output.stats:q} > {log:q} 2>&1"


rule align_split:
    input:
        joint=rules.align.output.joint,
        stats=rules.align.output.stats,
    output:
        f"{R}/data/{{pair}}/{{split}}.align",
    log:
        f"{L}/align/{{pair}}.{{split}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("align_split"),
    shell:
        "wordorder align-split --joint {input.joint:q} --stats {input.stats:q} --split {wildcards.split:q}"
        " --output {output:q} > {log:q} 2>&1"


rule preorder_gold:
    input:
        align=f"{R}/data/{{pair}}/{{split}}.align",
        tok=lambda w: data_file(w, w.split, "tok", "src"),
    output:
        f"{R}/preorder/{{pair}}/gold/{{split}}.perm",
    log:
        f"{L}/preorder_gold/{{pair}}.{{split}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        key=PREORDER["gold"]["key"],
        attach=PREORDER["gold"]["attach"],
    resources:
        mem_mb=mem_mb("preorder_gold"),
    shell:
        "wordorder preorder-gold --align {input.align:q} --tok {input.tok:q} --key {params.key:q}"
        " --attach {params.attach:q} --output {output:q} > {log:q} 2>&1"


rule word_classes:
    input:
        lambda w: data_file(w, "train", "tok", "src"),
    output:
        f"{R}/preorder/{{pair}}/classes.tsv",
    log:
        f"{L}/word_classes/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        classes=PREORDER["word_classes"]["classes"],
        iterations=PREORDER["word_classes"]["iterations"],
        seed=config["split_seed"],
    resources:
        mem_mb=mem_mb("word_classes"),
    shell:
        "wordorder word-classes --input {input:q} --classes {params.classes:q} --iterations {params.iterations:q}"
        " --seed {params.seed:q} --output {output:q} > {log:q} 2>&1"


def btg_inputs(split):
    return dict(
        tok=lambda w: data_file(w, split(w), "tok", "src"),
        conllu=lambda w: f"{R}/data/{w.pair}/{split(w)}.{src_lang(w)}.conllu",
        classes=f"{R}/preorder/{{pair}}/classes.tsv",
    )


rule btg_train:
    input:
        **btg_inputs(lambda w: "train"),
        align=f"{R}/data/{{pair}}/train.align",
    output:
        model=f"{R}/preorder/{{pair}}/btg/model.npz",
        stats=f"{R}/preorder/{{pair}}/btg/train.json",
    log:
        f"{L}/btg_train/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    benchmark:
        f"{R}/benchmarks/btg_train/{{pair}}.tsv"
    params:
        opts=as_json({**PREORDER["btg"], "seed": config["split_seed"]}),
    resources:
        mem_mb=mem_mb("btg_train"),
    shell:
        "wordorder btg-train --tok {input.tok:q} --conllu {input.conllu:q} --classes {input.classes:q}"
        " --align {input.align:q} --options {params.opts:q} --model {output.model:q} --stats {output.stats:q} > {log:q} 2>&1"


rule btg_apply:
    input:
        **btg_inputs(lambda w: w.split),
        model=rules.btg_train.output.model,
    output:
        f"{R}/preorder/{{pair}}/btg/{{split}}.perm",
    log:
        f"{L}/btg_apply/{{pair}}.{{split}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        pos=PREORDER["btg"]["pos"],
    threads: config["threads"]["preorder"]
    resources:
        mem_mb=mem_mb("btg_apply"),
    shell:
        "wordorder btg-apply --model {input.model:q} --tok {input.tok:q} --conllu {input.conllu:q}"
        " --classes {input.classes:q} --pos {params.pos:q} --threads {threads} --output {output:q} > {log:q} 2>&1"


def rvnn_inputs(split):
    return dict(
        tok=lambda w: data_file(w, split(w), "tok", "src"),
        conllu=lambda w: f"{R}/data/{w.pair}/{split(w)}.{src_lang(w)}.conllu",
        tree=lambda w: f"{R}/data/{w.pair}/{split(w)}.btree.{src_lang(w)}",
    )


rule rvnn_train:
    input:
        **rvnn_inputs(lambda w: "train"),
        align=f"{R}/data/{{pair}}/train.align",
    output:
        model=f"{R}/preorder/{{pair}}/rvnn/model.pt",
        stats=f"{R}/preorder/{{pair}}/rvnn/train.json",
    log:
        f"{L}/rvnn_train/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    benchmark:
        f"{R}/benchmarks/rvnn_train/{{pair}}.tsv"
    params:
        opts=as_json({**PREORDER["rvnn"], "seed": config["split_seed"]}),
    threads: config["threads"]["preorder"]
    resources:
        mem_mb=mem_mb("rvnn_train", PREORDER["rvnn"]["device"]),
        gpu=gpus(PREORDER["rvnn"]["device"]),
    shell:
        "wordorder rvnn-train --tok {input.tok:q} --conllu {input.conllu:q} --tree {input.tree:q}"
        " --align {input.align:q} --options {params.opts:q} --threads {threads}"
        " --model {output.model:q} --stats {output.stats:q} > {log:q} 2>&1"


rule rvnn_apply:
    input:
        **rvnn_inputs(lambda w: w.split),
        model=rules.rvnn_train.output.model,
    output:
        f"{R}/preorder/{{pair}}/rvnn/{{split}}.perm",
    log:
        f"{L}/rvnn_apply/{{pair}}.{{split}}.log",
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["preorder"]
    resources:
        mem_mb=mem_mb("rvnn_apply"),
    shell:
        "wordorder rvnn-apply --model {input.model:q} --tok {input.tok:q} --conllu {input.conllu:q}"
        " --tree {input.tree:q} --threads {threads} --output {output:q} > {log:q} 2>&1"


rule preorder_project:
    input:
        perm=f"{R}/preorder/{{pair}}/{{method}}/{{split}}.perm",
        tok=lambda w: data_file(w, w.split, "tok", "src"),
        bpe=lambda w: data_file(w, w.split, "bpe", "src"),
    output:
        tok=f"{R}/preorder/{{pair}}/{{method}}/{{split}}.tok.{{lang}}",
        bpe=f"{R}/preorder/{{pair}}/{{method}}/{{split}}.bpe.{{lang}}",
        positions=f"{R}/preorder/{{pair}}/{{method}}/{{split}}.positions.{{lang}}",
    log:
        f"{L}/preorder_project/{{pair}}.{{method}}.{{split}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        unit=PREORDER["positions"],  # subword or word positions (a change reruns the rule)
    shell:
        "wordorder preorder-project --perm {input.perm:q} --tok {input.tok:q} --bpe {input.bpe:q} --unit {params.unit:q}"
        " --out-tok {output.tok:q} --out-bpe {output.bpe:q} --out-positions {output.positions:q} > {log:q} 2>&1"


rule preorder_report:
    input:
        tok=lambda w: [data_file(w, s, "tok", "src") for s in source_splits(w.pair)],
        align=lambda w: [f"{R}/data/{w.pair}/{s}.align" for s in source_splits(w.pair)],
        perms=lambda w: [f"{R}/preorder/{w.pair}/{m}/{s}.perm" for m in METHODS for s in source_splits(w.pair)],
    output:
        json=f"{R}/preorder/{{pair}}/quality.json",
        csv=f"{R}/tables/preorder_quality_{{pair}}.csv",
        md=f"{R}/tables/preorder_quality_{{pair}}.md",
        figure=f"{R}/figures/preorder_{{pair}}.png",
    log:
        f"{L}/preorder_report/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        splits=lambda w: source_splits(w.pair),
        methods=METHODS,
    shell:
        "wordorder preorder-report --pair {wildcards.pair:q} --splits {params.splits:q} --tok {input.tok:q}"
        " --align {input.align:q} --methods {params.methods:q} --perms {input.perms:q}"
        " --json {output.json:q} --csv {output.csv:q} --md {output.md:q} --figure {output.figure:q} > {log:q} 2>&1"


def preorder_targets():
    """The quality table of every pair and the model inputs of every (method, split)."""
    if not METHODS:
        return []
    out = []
    for pair in config["pairs"]:
        src = pair_langs(pair)[0]
        out.append(f"{R}/tables/preorder_quality_{pair}.md")
        for m in METHODS:
            for s in source_splits(pair):
                out += [f"{R}/preorder/{pair}/{m}/{s}.{kind}.{src}" for kind in ("tok", "bpe", "positions")]
    return out
