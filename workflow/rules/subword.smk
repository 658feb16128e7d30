# Joint sentencepiece BPE over both sides of the training data.


rule subword_train:
    input:
        src=lambda w: f"{R}/data/{w.pair}/train.tok.{src_lang(w)}",
        tgt=lambda w: f"{R}/data/{w.pair}/train.tok.{tgt_lang(w)}",
    output:
        model=f"{R}/data/{{pair}}/spm.model",
        vocab=f"{R}/data/{{pair}}/spm.vocab",
    log:
        f"{L}/subword_train/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        opts=as_json(config["subword"]),
        seed=config["split_seed"],
    resources:
        mem_mb=mem_mb("subword_train"),
    shell:
        "wordorder subword-train --inputs {input.src} {input.tgt} --options {params.opts:q}"
        " --seed {params.seed} --model {output.model} > {log} 2>&1"


rule subword_encode:
    input:
        text=f"{R}/data/{{pair}}/{{split}}.tok.{{lang}}",
        model=f"{R}/data/{{pair}}/spm.model",
    output:
        f"{R}/data/{{pair}}/{{split}}.bpe.{{lang}}",
    log:
        f"{L}/subword_encode/{{pair}}.{{split}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("subword_encode"),
    shell:
        "wordorder subword-encode --model {input.model} --input {input.text} --output {output} > {log} 2>&1"
