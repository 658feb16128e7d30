# Corpus stage: fetch each source, tokenize, then clean the training corpus and split it.


rule fetch:
    input:
        fetch_inputs,  # the user's local files (none for a download)
    output:
        RAW,
    log:
        f"{L}/fetch/{{pair}}.{{corpus}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        spec=fetch_spec,
        cache=DOWNLOADS,
    shell:
        "wordorder fetch --spec {params.spec:q} --pair {wildcards.pair:q} --lang {wildcards.lang:q}"
        " --cache {params.cache:q} --output {output:q} > {log:q} 2>&1"


rule tokenize:
    input:
        RAW,
    output:
        TOKENIZED,
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
        unpack(split_inputs),  # src, tgt: the tokenized corpora
    output:
        SPLITS,
    log:
        f"{L}/split/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("split"),
    params:
        data=pair_data,
        clean=pair_clean_options,
        seed=config["split_seed"],
        tok_dir=tok_dir,  # the folder of the inputs
    shell:
        "wordorder split --pair {wildcards.pair:q} --data {params.data:q} --clean {params.clean:q}"
        " --seed {params.seed:q} --tok-dir {params.tok_dir:q} --output {output:q} > {log:q} 2>&1"


rule select:
    input:
        unpack(select_inputs),  # raw, tok: the corpus the split is cut from
        splits=SPLITS,
    output:
        raw=TEXT,
        tok=SPLIT_TOK,
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
        first=first_reference,
        ref=extra_ref_input,  # the user's file
    output:
        EXTRA_REF,
    log:
        f"{L}/reference/{{pair}}.{{testset}}.{{n}}.{{lang}}.log",
    wildcard_constraints:
        n=r"\d+",
    conda:
        "../../envs/wordorder.yaml"
    params:
        spec=testset_spec,
    shell:
        "wordorder reference --spec {params.spec:q} --pair {wildcards.pair:q}"
        " --index {wildcards.n:q} --first {input.first:q} --output {output:q} > {log:q} 2>&1"
