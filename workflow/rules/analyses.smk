# Analyses beyond the scores: swap-noise robustness (Chen et al. 2019, Figs 3-5).


# Each rule writes every noise level (evaluation.swap_noise.percents) of its test set at once.
rule swap_perm:
    input:
        tok=EX.test_source_tok,
    output:
        EX.swap_levels(P.SWAP_PERM),
    log:
        f"{L}/swap_perm/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        percents=EX.swap_percents(),
        seed=SWAP["seed"],
    shell:
        "wordorder swap-perm --tok {input.tok:q} --percent {params.percents:q}"
        " --seed {params.seed:q} --output {output:q} > {log:q} 2>&1"


rule swap_project:
    input:
        perm=rules.swap_perm.output,
        tok=EX.test_source_tok,
        bpe=EX.test_source_bpe,
    output:
        tok=EX.swap_levels(fill(P.SWAPPED, kind="tok")),
        bpe=EX.swap_levels(fill(P.SWAPPED, kind="bpe")),
        positions=EX.swap_levels(fill(P.SWAPPED, kind="positions")),
    log:
        f"{L}/swap_project/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder preorder-project --perm {input.perm:q} --tok {input.tok:q}"
        " --bpe {input.bpe:q} --out-tok {output.tok:q} --out-bpe {output.bpe:q}"
        " --out-positions {output.positions:q} > {log:q} 2>&1"


rule translate_swapped:
    input:
        unpack(EX.spm_inputs),  # spm (source or joint), spm_tgt
        model=P.MODEL,
        src=rules.swap_project.output.bpe,
    output:
        hyp=EX.swap_levels(P.SWAP_HYP),
        tok=EX.swap_levels(P.SWAP_HYP_TOK),
    log:
        f"{L}/translate_swapped/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["translate"]
    resources:
        gpu=gpus(config["decode"]["device"]),
        mem_mb=mem_mb("translate", config["decode"]["device"]),
    params:
        opts=as_json(config["decode"]),
        lang=EX.tgt_lang,
        spm_tgt=EX.spm_tgt_arg,
    shell:
        "wordorder translate --checkpoint {input.model:q} --spm {input.spm:q} {params.spm_tgt:q}"
        " --input {input.src:q} --lang {params.lang:q} --options {params.opts:q}"
        " --threads {threads} --output {output.hyp:q} --output-tok {output.tok:q} > {log:q} 2>&1"


rule swap_noise:
    input:
        ref=EX.test_reference,
        hyps=EX.swap_noise_hyps,
    output:
        csv=P.SWAP_CSV,
        md=P.SWAP_MD,
        png=report(P.SWAP_FIGURE, caption="../report/swap_noise.rst", category="Figures"),
    log:
        f"{L}/swap_noise/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=EX.tgt_lang,
        hyps=EX.swap_noise_hyp_args,
        title=EX.swap_noise_title,
    shell:
        "wordorder swap-noise-report --ref {input.ref:q} --lang {params.lang:q}"
        " --hyps {params.hyps:q} --title {params.title:q} --csv {output.csv:q} --md {output.md:q}"
        " --png {output.png:q} > {log:q} 2>&1"
