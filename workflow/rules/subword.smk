# Sentencepiece BPE: one joint model over both sides of the training data, or (subword.joint:
# false) one model per side, trained on that side's training text.


rule subword_train:
    input:
        unpack(EX.subword_train_inputs),  # src, tgt: the tokenized training text
    output:
        model=P.SPM_MODEL,
        vocab=P.SPM_VOCAB,
    log:
        f"{L}/subword_train/{{pair}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("subword_train"),
    params:
        opts=EX.subword_options(),
        seed=config["split_seed"],
    shell:
        "wordorder subword-train --inputs {input.src:q} {input.tgt:q} --options {params.opts:q}"
        " --seed {params.seed:q} --model {output.model:q} > {log:q} 2>&1"


rule subword_train_side:
    input:
        fill(P.SPLIT_TOK, split="train"),
    output:
        model=P.SPM_SIDE_MODEL,
        vocab=P.SPM_SIDE_VOCAB,
    log:
        f"{L}/subword_train/{{pair}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("subword_train"),
    params:
        opts=EX.subword_options(),
        seed=config["split_seed"],
    shell:
        "wordorder subword-train --inputs {input:q} --options {params.opts:q}"
        " --seed {params.seed:q} --model {output.model:q} > {log:q} 2>&1"


rule subword_encode:
    input:
        text=P.SPLIT_TOK,
        model=EX.side_spm_model,
    output:
        P.SPLIT_BPE,
    log:
        f"{L}/subword_encode/{{pair}}.{{split}}.{{lang}}.log",
    conda:
        "../../envs/wordorder.yaml"
    resources:
        mem_mb=mem_mb("subword_encode"),
    shell:
        "wordorder subword-encode --model {input.model:q} --input {input.text:q}"
        " --output {output:q} > {log:q} 2>&1"
