# Corpus stage: fetch each source, tokenize, then clean the training corpus and split it.


rule fetch:
    output:
        f"{R}/data/{{pair}}/raw/{{corpus}}.{{lang}}",
    log:
        f"{L}/fetch/{{pair}}.{{corpus}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        spec=lambda w: as_json(split_spec(config["data"][w.pair], w.corpus)),
        cache=f"{config['results']}/downloads",
    shell:
        "wordorder fetch --spec {params.spec:q} --pair {wildcards.pair:q} --lang {wildcards.lang:q}"
        " --cache {params.cache:q} --output {output:q} > {log:q} 2>&1"


rule tokenize:
    input:
        f"{R}/data/{{pair}}/raw/{{corpus}}.{{lang}}",
    output:
        f"{R}/data/{{pair}}/tok/{{corpus}}.{{lang}}",
    log:
        f"{L}/tokenize/{{pair}}.{{corpus}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["tokenize"]
    resources:
        mem_mb=mem_mb("tokenize"),
    shell:
        "wordorder tokenize --lang {wildcards.lang:q} --input {input:q} --output {output:q} > {log:q} 2>&1"


rule split:
    input:
        src=lambda w: expand(f"{R}/data/{w.pair}/tok/{{c}}.{src_lang(w)}", c=fetched_corpora(w.pair)),
        tgt=lambda w: expand(f"{R}/data/{w.pair}/tok/{{c}}.{tgt_lang(w)}", c=fetched_corpora(w.pair)),
    output:
        f"{R}/data/{{pair}}/splits.json",
    log:
        f"{L}/split/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        data=lambda w: as_json(config["data"][w.pair]),
        clean=lambda w: as_json(clean_options(config, w.pair)),
        seed=config["split_seed"],
        tok_dir=lambda w: f"{R}/data/{w.pair}/tok",  # the folder of the inputs
    resources:
        mem_mb=mem_mb("split"),
    shell:
        "wordorder split --pair {wildcards.pair:q} --data {params.data:q} --clean {params.clean:q}"
        " --seed {params.seed:q} --tok-dir {params.tok_dir:q} --output {output:q} > {log:q} 2>&1"


rule select:
    input:
        raw=lambda w: f"{R}/data/{w.pair}/raw/{corpus_of(w)}.{w.lang}",
        tok=lambda w: f"{R}/data/{w.pair}/tok/{corpus_of(w)}.{w.lang}",
        splits=f"{R}/data/{{pair}}/splits.json",
    output:
        raw=f"{R}/data/{{pair}}/{{split}}.{{lang}}",
        tok=f"{R}/data/{{pair}}/{{split}}.tok.{{lang}}",
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
        first=lambda w: f"{R}/data/{w.pair}/{w.testset}.{w.lang}",
    output:
        f"{R}/data/{{pair}}/refs/{{testset}}.{{n}}.{{lang}}",
    log:
        f"{L}/reference/{{pair}}.{{testset}}.{{n}}.{{lang}}.log",
    wildcard_constraints:
        n=r"\d+",
    conda:
        "../../envs/wordorder.yaml"
    params:
        spec=lambda w: as_json(config["data"][w.pair]["test"][w.testset]),
    shell:
        "wordorder reference --spec {params.spec:q} --pair {wildcards.pair:q} --index {wildcards.n:q}"
        " --first {input.first:q} --output {output:q} > {log:q} 2>&1"
