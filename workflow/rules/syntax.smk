# Syntax stage: parse the tokenized source side in shards (syntax.shards of the training split,
# syntax.eval_shards of the others) gathered in line order, project POS, BIEO, heads and binary
# trees onto the subword files, and report tree statistics and masks.


rule parse_shard:
    input:
        P.SPLIT_TOK,
    output:
        conllu=temp(P.PARSE_SHARD),
        stats=temp(P.PARSE_SHARD_STATS),
    log:
        f"{L}/parse/{{pair}}.{{split}}.{{lang}}.{{scatteritem}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("parse_shard"),
    params:
        parsers=as_json(config["syntax"]["parsers"]),
        batch_size=config["syntax"]["batch_size"],
    shell:
        "wordorder parse --lang {wildcards.lang:q} --input {input:q}"
        " --shard {wildcards.scatteritem:q} --parsers {params.parsers:q}"
        " --batch-size {params.batch_size:q} --output {output.conllu:q} > {log:q} 2>&1"


rule parse_gather:
    input:
        unpack(EX.parse_shards),
        tokenized=P.SPLIT_TOK,
    output:
        conllu=P.CONLLU,
        summary=P.PARSE_SUMMARY,
    log:
        f"{L}/parse/{{pair}}.{{split}}.{{lang}}.gather.log",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder parse-gather --shards {input.shards:q} --tokenized {input.tokenized:q}"
        " --output {output.conllu:q} --summary {output.summary:q} > {log:q} 2>&1"


rule syntax_project:
    input:
        conllu=P.CONLLU,
        bpe=P.SPLIT_BPE,
    output:
        pos=fill(P.SPLIT_FILE, kind="pos"),
        bieo=fill(P.SPLIT_FILE, kind="bieo"),
        dep=fill(P.SPLIT_FILE, kind="dep"),
        heads=fill(P.SPLIT_FILE, kind="heads"),
        tree=fill(P.SPLIT_FILE, kind="btree"),
        word=fill(P.SPLIT_FILE, kind="word"),
        head=fill(P.SPLIT_FILE, kind="head"),
    log:
        f"{L}/syntax_project/{{pair}}.{{split}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder syntax-project --conllu {input.conllu:q} --bpe {input.bpe:q}"
        " --out-pos {output.pos:q} --out-bieo {output.bieo:q} --out-dep {output.dep:q}"
        " --out-heads {output.heads:q} --out-tree {output.tree:q} --out-word {output.word:q}"
        " --out-head {output.head:q} > {log:q} 2>&1"


rule syntax_report:
    input:
        unpack(EX.syntax_report_inputs),  # conllu, summaries, features of every parsed split
    output:
        json=P.SYNTAX_JSON,
        figure=P.SYNTAX_FIGURE,
    log:
        f"{L}/syntax_report/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        splits=EX.source_splits_of,
        lang=EX.src_lang,
    shell:
        "wordorder syntax-report --pair {wildcards.pair:q} --lang {params.lang:q}"
        " --splits {params.splits:q} --conllu {input.conllu:q} --summaries {input.summaries:q}"
        " --json {output.json:q} --figure {output.figure:q} > {log:q} 2>&1"
