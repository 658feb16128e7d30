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
        # A list: the shell command quotes each word.
        launcher=(["torchrun", "--standalone", "--nproc_per_node", str(config["train_processes"]), "-m", "wordorder.cli"]
                  if config["train_processes"] > 1 else ["wordorder"]),
    threads: config["threads"]["train"]
    resources:
        mem_mb=mem_mb("train", config["train"].get("device", "auto")),
        gpu=gpus(config["train"].get("device", "auto"), config["train_processes"]),
    shell:
        "{params.launcher:q} train --train-src {input.train_src:q} --train-tgt {input.train_tgt:q}"
        " --dev-src {input.dev_src:q} --dev-ref {input.dev_ref:q} --spm {input.spm:q} {params.spm_tgt:q}"
        " --model-options {params.model:q} --train-options {params.train:q}"
        " --seed {wildcards.seed:q} --threads {threads} --features {params.features:q}"
        " --state {params.state:q} --output {output.model:q} > {log:q} 2>&1"
