# Alignment and preordering: eflomal alignments of all splits together, then per split and
# method (gold, btg, rvnn) one permutation per line, its projection onto the model inputs,
# and the preorder_quality table (Kendall tau, FRS) of every pair. The learned preorderers may
# be cross-fitted on the training split (preorder.<method>.cross_fit, the *_train_fold rules).


rule align:
    input:
        unpack(EX.align_inputs),  # src, tgt: the tokenized splits; gold: the gold set, if any
    output:
        joint=P.ALIGN_JOINT,
        stats=P.ALIGN_STATS,
    log:
        f"{L}/align/{{pair}}.log",
    benchmark:
        f"{R}/benchmarks/align/{{pair}}.tsv"
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["align"]
    resources:
        mem_mb=mem_mb("align"),
    params:
        splits=EX.source_splits_of,
        opts=as_json(config["align"]),
        seed=config["split_seed"],
        gold=EX.align_gold_args,
        swap=EX.gold_swap_arg,
    shell:
        "wordorder align --src {input.src:q} --tgt {input.tgt:q} --splits {params.splits:q}"
        " {params.gold:q} {params.swap:q} --options {params.opts:q} --seed {params.seed:q}"
        " --output {output.joint:q} --stats {output.stats:q} > {log:q} 2>&1"


rule align_split:
    input:
        joint=rules.align.output.joint,
        stats=rules.align.output.stats,
    output:
        P.SPLIT_ALIGN,
    log:
        f"{L}/align/{{pair}}.{{split}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("align_split"),
    shell:
        "wordorder align-split --joint {input.joint:q} --stats {input.stats:q}"
        " --split {wildcards.split:q} --output {output:q} > {log:q} 2>&1"


rule preorder_gold:
    input:
        align=P.SPLIT_ALIGN,
        tok=EX.split_source_tok,
    output:
        fill(P.PERM, method="gold"),
    log:
        f"{L}/preorder_gold/{{pair}}.{{split}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("preorder_gold"),
    params:
        key=PREORDER["gold"]["key"],
        attach=PREORDER["gold"]["attach"],
    shell:
        "wordorder preorder-gold --align {input.align:q} --tok {input.tok:q} --key {params.key:q}"
        " --attach {params.attach:q} --output {output:q} > {log:q} 2>&1"


rule word_classes:
    input:
        EX.train_source_tok,
    output:
        P.WORD_CLASSES,
    log:
        f"{L}/word_classes/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("word_classes"),
    params:
        classes=PREORDER["word_classes"]["classes"],
        iterations=PREORDER["word_classes"]["iterations"],
        seed=config["split_seed"],
    shell:
        "wordorder word-classes --input {input:q} --classes {params.classes:q}"
        " --iterations {params.iterations:q} --seed {params.seed:q}"
        " --output {output:q} > {log:q} 2>&1"


rule btg_train:
    input:
        unpack(EX.btg_train_inputs),  # tok, conllu, classes
        align=fill(P.SPLIT_ALIGN, split="train"),
    output:
        model=P.BTG_MODEL,
        stats=P.BTG_STATS,
    log:
        f"{L}/btg_train/{{pair}}.log",
    benchmark:
        f"{R}/benchmarks/btg_train/{{pair}}.tsv"
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("btg_train"),
    params:
        opts=EX.preorderer_options("btg"),
    shell:
        "wordorder btg-train --tok {input.tok:q} --conllu {input.conllu:q}"
        " --classes {input.classes:q} --align {input.align:q} --options {params.opts:q}"
        " --model {output.model:q} --stats {output.stats:q} > {log:q} 2>&1"


# Cross-fitting (preorder.btg.cross_fit = K > 1): model k is trained without the training
# sentences i % K == k and preorders them (btg_apply on the training split takes all K).
rule btg_train_fold:
    input:
        unpack(EX.btg_train_inputs),  # tok, conllu, classes
        align=fill(P.SPLIT_ALIGN, split="train"),
    output:
        model=P.BTG_FOLD_MODEL,
        stats=P.BTG_FOLD_STATS,
    log:
        f"{L}/btg_train/{{pair}}.fold{{fold}}.log",
    benchmark:
        f"{R}/benchmarks/btg_train/{{pair}}.fold{{fold}}.tsv"
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("btg_train"),
    params:
        opts=EX.preorderer_options("btg"),
        folds=PREORDER["btg"]["cross_fit"],
    shell:
        "wordorder btg-train --tok {input.tok:q} --conllu {input.conllu:q}"
        " --classes {input.classes:q} --align {input.align:q} --options {params.opts:q}"
        " --fold {wildcards.fold:q} --folds {params.folds:q}"
        " --model {output.model:q} --stats {output.stats:q} > {log:q} 2>&1"


rule btg_apply:
    input:
        unpack(EX.btg_apply_inputs),  # tok, conllu, classes
        model=EX.btg_apply_models,  # the full model, or the fold models for train (cross_fit)
    output:
        fill(P.PERM, method="btg"),
    log:
        f"{L}/btg_apply/{{pair}}.{{split}}.log",
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["preorder"]
    resources:
        mem_mb=mem_mb("btg_apply"),
    params:
        pos=PREORDER["btg"]["pos"],
    shell:
        "wordorder btg-apply --model {input.model:q} --tok {input.tok:q}"
        " --conllu {input.conllu:q} --classes {input.classes:q} --pos {params.pos:q}"
        " --threads {threads} --output {output:q} > {log:q} 2>&1"


rule rvnn_train:
    input:
        unpack(EX.rvnn_train_inputs),  # tok, conllu, tree
        align=fill(P.SPLIT_ALIGN, split="train"),
    output:
        model=P.RVNN_MODEL,
        stats=P.RVNN_STATS,
    log:
        f"{L}/rvnn_train/{{pair}}.log",
    benchmark:
        f"{R}/benchmarks/rvnn_train/{{pair}}.tsv"
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["preorder"]
    resources:
        mem_mb=mem_mb("rvnn_train", PREORDER["rvnn"]["device"]),
        gpu=gpus(PREORDER["rvnn"]["device"]),
    params:
        opts=EX.preorderer_options("rvnn"),
    shell:
        "wordorder rvnn-train --tok {input.tok:q} --conllu {input.conllu:q} --tree {input.tree:q}"
        " --align {input.align:q} --options {params.opts:q} --threads {threads}"
        " --model {output.model:q} --stats {output.stats:q} > {log:q} 2>&1"


rule rvnn_train_fold:
    input:
        unpack(EX.rvnn_train_inputs),  # tok, conllu, tree
        align=fill(P.SPLIT_ALIGN, split="train"),
    output:
        model=P.RVNN_FOLD_MODEL,
        stats=P.RVNN_FOLD_STATS,
    log:
        f"{L}/rvnn_train/{{pair}}.fold{{fold}}.log",
    benchmark:
        f"{R}/benchmarks/rvnn_train/{{pair}}.fold{{fold}}.tsv"
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["preorder"]
    resources:
        mem_mb=mem_mb("rvnn_train", PREORDER["rvnn"]["device"]),
        gpu=gpus(PREORDER["rvnn"]["device"]),
    params:
        opts=EX.preorderer_options("rvnn"),
        folds=PREORDER["rvnn"]["cross_fit"],
    shell:
        "wordorder rvnn-train --tok {input.tok:q} --conllu {input.conllu:q} --tree {input.tree:q}"
        " --align {input.align:q} --options {params.opts:q} --threads {threads}"
        " --fold {wildcards.fold:q} --folds {params.folds:q}"
        " --model {output.model:q} --stats {output.stats:q} > {log:q} 2>&1"


rule rvnn_apply:
    input:
        unpack(EX.rvnn_apply_inputs),  # tok, conllu, tree
        model=EX.rvnn_apply_models,  # the full model, or the fold models for train (cross_fit)
    output:
        fill(P.PERM, method="rvnn"),
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
        perm=P.PERM,
        tok=EX.split_source_tok,
        bpe=EX.split_source_bpe,
    output:
        tok=fill(P.PREORDERED, kind="tok"),
        bpe=fill(P.PREORDERED, kind="bpe"),
        positions=fill(P.PREORDERED, kind="positions"),
    log:
        f"{L}/preorder_project/{{pair}}.{{method}}.{{split}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        unit=PREORDER["positions"],  # subword or word positions (a change reruns the rule)
    shell:
        "wordorder preorder-project --perm {input.perm:q} --tok {input.tok:q} --bpe {input.bpe:q}"
        " --unit {params.unit:q} --out-tok {output.tok:q} --out-bpe {output.bpe:q}"
        " --out-positions {output.positions:q} > {log:q} 2>&1"


rule preorder_report:
    input:
        unpack(EX.preorder_report_inputs),  # tok, align, perms of every parsed split
    output:
        json=P.PREORDER_QUALITY,
        csv=P.PREORDER_CSV,
        md=P.PREORDER_MD,
        figure=P.PREORDER_FIGURE,
    log:
        f"{L}/preorder_report/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        splits=EX.source_splits_of,
        methods=METHODS,
    shell:
        "wordorder preorder-report --pair {wildcards.pair:q} --splits {params.splits:q}"
        " --tok {input.tok:q} --align {input.align:q} --methods {params.methods:q}"
        " --perms {input.perms:q} --json {output.json:q} --csv {output.csv:q} --md {output.md:q}"
        " --figure {output.figure:q} > {log:q} 2>&1"
