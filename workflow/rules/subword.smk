# Sentencepiece BPE: one joint model over both sides of the training data, or (subword.joint:
# false) one model per side, trained on that side's training text.


def subword_options():
    """The sentencepiece options (``joint`` decides which rule runs, not how a model trains)."""
    return as_json({k: v for k, v in config["subword"].items() if k != "joint"})


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
        opts=subword_options(),
        seed=config["split_seed"],
    resources:
        mem_mb=mem_mb("subword_train"),
    shell:
        "wordorder subword-train --inputs {input.src:q} {input.tgt:q} --options {params.opts:q}"
        " --seed {params.seed:q} --model {output.model:q} > {log:q} 2>&1"


rule subword_train_side:
    input:
        f"{R}/data/{{pair}}/train.tok.{{lang}}",
    output:
        model=f"{R}/data/{{pair}}/spm.{{lang}}.model",
        vocab=f"{R}/data/{{pair}}/spm.{{lang}}.vocab",
    log:
        f"{L}/subword_train/{{pair}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        opts=subword_options(),
        seed=config["split_seed"],
    resources:
        mem_mb=mem_mb("subword_train"),
    shell:
        "wordorder subword-train --inputs {input:q} --options {params.opts:q}"
        " --seed {params.seed:q} --model {output.model:q} > {log:q} 2>&1"


rule subword_encode:
    input:
        text=f"{R}/data/{{pair}}/{{split}}.tok.{{lang}}",
        model=lambda w: spm_model(w.pair, w.lang),
    output:
        f"{R}/data/{{pair}}/{{split}}.bpe.{{lang}}",
    log:
        f"{L}/subword_encode/{{pair}}.{{split}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("subword_encode"),
    shell:
        "wordorder subword-encode --model {input.model:q} --input {input.text:q} --output {output:q} > {log:q} 2>&1"
