# Syntax stage: parse the tokenized source side in shards (scatter/gather), project POS, BIEO,
# heads and binary trees onto the subword files, and report tree statistics and masks.


scattergather:
    parse=config["syntax"]["shards"],


rule parse_shard:
    input:
        f"{R}/data/{{pair}}/{{split}}.tok.{{lang}}",
    output:
        conllu=temp(f"{R}/data/{{pair}}/parse/{{split}}.{{lang}}.{{scatteritem}}.conllu"),
        stats=temp(f"{R}/data/{{pair}}/parse/{{split}}.{{lang}}.{{scatteritem}}.conllu.json"),
    log:
        f"{L}/parse/{{pair}}.{{split}}.{{lang}}.{{scatteritem}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        parsers=as_json(config["syntax"]["parsers"]),
        batch_size=config["syntax"]["batch_size"],
    resources:
        mem_mb=mem_mb("parse_shard"),
    shell:
        "wordorder parse --lang {wildcards.lang:q} --input {input:q} --shard {wildcards.scatteritem:q}"
        " --parsers {params.parsers:q} --batch-size {params.batch_size:q} --output {output.conllu:q} > {log:q} 2>&1"


rule parse_gather:
    input:
        shards=gather.parse(f"{R}/data/{{{{pair}}}}/parse/{{{{split}}}}.{{{{lang}}}}.{{scatteritem}}.conllu"),
        stats=gather.parse(f"{R}/data/{{{{pair}}}}/parse/{{{{split}}}}.{{{{lang}}}}.{{scatteritem}}.conllu.json"),
        tokenized=f"{R}/data/{{pair}}/{{split}}.tok.{{lang}}",
    output:
        conllu=f"{R}/data/{{pair}}/{{split}}.{{lang}}.conllu",
        summary=f"{R}/data/{{pair}}/{{split}}.{{lang}}.parse.json",
    log:
        f"{L}/parse/{{pair}}.{{split}}.{{lang}}.gather.log",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder parse-gather --shards {input.shards:q} --tokenized {input.tokenized:q}"
        " --output {output.conllu:q} --summary {output.summary:q} > {log:q} 2>&1"


rule syntax_project:
    input:
        conllu=f"{R}/data/{{pair}}/{{split}}.{{lang}}.conllu",
        bpe=f"{R}/data/{{pair}}/{{split}}.bpe.{{lang}}",
    output:
        pos=f"{R}/data/{{pair}}/{{split}}.pos.{{lang}}",
        bieo=f"{R}/data/{{pair}}/{{split}}.bieo.{{lang}}",
        dep=f"{R}/data/{{pair}}/{{split}}.dep.{{lang}}",
        heads=f"{R}/data/{{pair}}/{{split}}.heads.{{lang}}",
        tree=f"{R}/data/{{pair}}/{{split}}.btree.{{lang}}",
        word=f"{R}/data/{{pair}}/{{split}}.word.{{lang}}",
        head=f"{R}/data/{{pair}}/{{split}}.head.{{lang}}",
    log:
        f"{L}/syntax_project/{{pair}}.{{split}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder syntax-project --conllu {input.conllu:q} --bpe {input.bpe:q} --out-pos {output.pos:q}"
        " --out-bieo {output.bieo:q} --out-dep {output.dep:q} --out-heads {output.heads:q} --out-tree {output.tree:q}"
        " --out-word {output.word:q} --out-head {output.head:q} > {log:q} 2>&1"


rule syntax_report:
    input:
        conllu=lambda w: [f"{R}/data/{w.pair}/{s}.{src_lang(w)}.conllu" for s in source_splits(w.pair)],
        summaries=lambda w: [f"{R}/data/{w.pair}/{s}.{src_lang(w)}.parse.json" for s in source_splits(w.pair)],
        features=lambda w: [f"{R}/data/{w.pair}/{s}.btree.{src_lang(w)}" for s in source_splits(w.pair)],
    output:
        json=f"{R}/syntax/{{pair}}.json",
        figure=f"{R}/figures/syntax_{{pair}}.png",
    log:
        f"{L}/syntax_report/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        splits=lambda w: source_splits(w.pair),
        lang=src_lang,
    shell:
        "wordorder syntax-report --pair {wildcards.pair:q} --lang {params.lang:q} --splits {params.splits:q}"
        " --conllu {input.conllu:q} --summaries {input.summaries:q}"
        " --json {output.json:q} --figure {output.figure:q} > {log:q} 2>&1"
