# Training: one model per (pair, variant, seed); the variant registry gives the model options.


rule train:
    input:
        unpack(EX.train_inputs),  # spm, spm_tgt, train_src, train_tgt, dev_src, dev_ref, features
    output:
        model=P.MODEL,
        metrics=P.METRICS,
    log:
        f"{L}/train/{{pair}}.{{variant}}.seed{{seed}}.log",
    benchmark:
        f"{R}/benchmarks/train/{{pair}}.{{variant}}.seed{{seed}}.tsv"
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["train"]
    resources:
        mem_mb=mem_mb("train", config["train"].get("device", "auto")),
        gpu=gpus(config["train"].get("device", "auto"), config["train_processes"]),
    params:
        model=EX.model_json,
        spm_tgt=EX.spm_tgt_arg,
        train=as_json(config["train"]),
        features=EX.train_features_json,
        # Not an output: Snakemake keeps it when the job fails or hits a time limit, and the
        # rerun continues from it (train.checkpoint_every, and SIGTERM).
        state=P.TRAIN_STATE,
        launcher=EX.train_launcher(),  # wordorder, or torchrun over train_processes GPUs
    shell:
        "{params.launcher:q} train --train-src {input.train_src:q} --train-tgt {input.train_tgt:q}"
        " --dev-src {input.dev_src:q} --dev-ref {input.dev_ref:q} --spm {input.spm:q}"
        " {params.spm_tgt:q} --model-options {params.model:q} --train-options {params.train:q}"
        " --seed {wildcards.seed:q} --threads {threads} --features {params.features:q}"
        " --state {params.state:q} --output {output.model:q} > {log:q} 2>&1"
