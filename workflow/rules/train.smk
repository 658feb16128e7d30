# Training: one model per (pair, variant, seed); the variant registry gives the model options.


rule train:
    input:
        unpack(spm_inputs),  # spm (source or joint), spm_tgt
        train_src=lambda w: variant_source(w, "train"),
        train_tgt=lambda w: data_file(w, "train", "bpe", "tgt"),
        dev_src=lambda w: variant_source(w, "dev"),
        dev_ref=lambda w: data_file(w, "dev", "tok", "tgt"),
        features=lambda w: list(variant_features(w, "train").values()) + list(variant_features(w, "dev").values()),
    output:
        model=f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/best.pt",
        metrics=f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/metrics.jsonl",
    log:
        f"{L}/train/{{pair}}.{{variant}}.seed{{seed}}.log",
    conda:
        "../../envs/wordorder.yaml"
    benchmark:
        f"{R}/benchmarks/train/{{pair}}.{{variant}}.seed{{seed}}.tsv"
    params:
        model=lambda w: as_json(model_options(w)),
        spm_tgt=spm_tgt_arg,
        train=as_json(config["train"]),
        features=lambda w: as_json(train_features(w)),
        # Not an output: Snakemake keeps it when the job fails or hits a time limit, and the
        # rerun continues from it (train.checkpoint_every, and SIGTERM).
        state=f"{R}/resume/{{pair}}/{{variant}}/seed{{seed}}/state.pt",
        # One process, or torchrun starting train_processes DDP processes (one per GPU).
        launcher=(f"torchrun --standalone --nproc_per_node {config['train_processes']} -m wordorder.cli"
                  if config["train_processes"] > 1 else "wordorder"),
    threads: config["threads"]["train"]
    resources:
        mem_mb=mem_mb("train", config["train"].get("device", "auto")),
        gpu=gpus(config["train"].get("device", "auto"), config["train_processes"]),
    shell:
        "{params.launcher} train --train-src {input.train_src} --train-tgt {input.train_tgt}"
        " --dev-src {input.dev_src} --dev-ref {input.dev_ref} --spm {input.spm} {params.spm_tgt}"
        " --model-options {params.model:q} --train-options {params.train:q}"
        " --seed {wildcards.seed} --threads {threads} --features {params.features:q}"
        " --state {params.state} --output {output.model} > {log} 2>&1"
