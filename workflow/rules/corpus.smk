# Corpus stage: fetch each source, tokenize, then clean the training corpus and split it.


rule fetch:
    input:
        EX.fetch_inputs,  # the user's local files (none for a download)
    output:
        P.RAW,
    log:
        f"{L}/fetch/{{pair}}.{{corpus}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        spec=EX.fetch_spec,
        cache=P.DOWNLOADS,
    shell:
        "wordorder fetch --spec {params.spec:q} --pair {wildcards.pair:q} --lang {wildcards.lang:q}"
        " --cache {params.cache:q} --output {output:q} > {log:q} 2>&1"


rule tokenize:
    input:
        P.RAW,
    output:
        P.TOKENIZED,
    log:
        f"{L}/tokenize/{{pair}}.{{corpus}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["tokenize"]
    resources:
        mem_mb=mem_mb("tokenize"),
    shell:
        "wordorder tokenize --lang {wildcards.lang:q} --input {input:q}"
        " --output {output:q} > {log:q} 2>&1"


rule split:
    input:
        unpack(EX.split_inputs),  # src, tgt: the tokenized corpora
    output:
        P.SPLITS,
    log:
        f"{L}/split/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("split"),
    params:
        data=EX.pair_data,
        clean=EX.pair_clean_options,
        seed=config["split_seed"],
        tok_dir=EX.tok_dir,  # the folder of the inputs
    shell:
        "wordorder split --pair {wildcards.pair:q} --data {params.data:q} --clean {params.clean:q}"
        " --seed {params.seed:q} --tok-dir {params.tok_dir:q} --output {output:q} > {log:q} 2>&1"


rule select:
    input:
        unpack(EX.select_inputs),  # raw, tok: the corpus the split is cut from
        splits=P.SPLITS,
    output:
        raw=P.TEXT,
        tok=P.SPLIT_TOK,
    log:
        f"{L}/select/{{pair}}.{{split}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("select"),
    shell:
        "wordorder select --splits {input.splits:q} --split {wildcards.split:q} --raw {input.raw:q}"
        " --tok {input.tok:q} --out-raw {output.raw:q} --out-tok {output.tok:q} > {log:q} 2>&1"


rule reference:
    input:
        first=EX.first_reference,
        ref=EX.extra_ref_input,  # the user's file
    output:
        P.EXTRA_REF,
    log:
        f"{L}/reference/{{pair}}.{{testset}}.{{n}}.{{lang}}.log",
    wildcard_constraints:
        n=r"\d+",
    conda:
        "../../envs/wordorder.yaml"
    params:
        spec=EX.testset_spec,
    shell:
        "wordorder reference --spec {params.spec:q} --pair {wildcards.pair:q}"
        " --index {wildcards.n:q} --first {input.first:q} --output {output:q} > {log:q} 2>&1"
