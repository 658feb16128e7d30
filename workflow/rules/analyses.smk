# Analyses beyond the scores: swap-noise robustness (Chen et al. 2019, Figs 3-5).
SWAP = config["evaluation"]["swap_noise"]


def swap_noise_targets():
    if not SWAP["percents"]:
        return []
    return [f"{R}/figures/swap_noise_{p}_{t}.png" for p in config["pairs"] for t in testsets(p)]


rule swap_perm:
    input:
        tok=lambda w: data_file(w, w.testset, "tok", "src"),
    output:
        f"{R}/noise/{{pair}}/swap{{percent}}/{{testset}}.perm",
    log:
        f"{L}/swap_perm/{{pair}}.{{testset}}.{{percent}}.log",
    wildcard_constraints:
        percent=r"\d+",
    params:
        seed=SWAP["seed"],
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder swap-perm --tok {input.tok:q} --percent {wildcards.percent:q} --seed {params.seed:q}"
        " --output {output:q} > {log:q} 2>&1"


rule swap_project:
    input:
        perm=rules.swap_perm.output,
        tok=lambda w: data_file(w, w.testset, "tok", "src"),
        bpe=lambda w: data_file(w, w.testset, "bpe", "src"),
    output:
        tok=f"{R}/noise/{{pair}}/swap{{percent}}/{{testset}}.tok",
        bpe=f"{R}/noise/{{pair}}/swap{{percent}}/{{testset}}.bpe",
        positions=f"{R}/noise/{{pair}}/swap{{percent}}/{{testset}}.positions",
    log:
        f"{L}/swap_project/{{pair}}.{{testset}}.{{percent}}.log",
    wildcard_constraints:
        percent=r"\d+",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder preorder-project --perm {input.perm:q} --tok {input.tok:q} --bpe {input.bpe:q}"
        " --out-tok {output.tok:q} --out-bpe {output.bpe:q} --out-positions {output.positions:q} > {log:q} 2>&1"


rule translate_swapped:
    input:
        unpack(spm_inputs),  # spm (source or joint), spm_tgt
        model=f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/best.pt",
        src=rules.swap_project.output.bpe,
    output:
        hyp=f"{R}/noise/{{pair}}/swap{{percent}}/{{variant}}/seed{{seed}}/{{testset}}.hyp",
        tok=f"{R}/noise/{{pair}}/swap{{percent}}/{{variant}}/seed{{seed}}/{{testset}}.hyp.tok",
    log:
        f"{L}/translate_swapped/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.{{percent}}.log",
    wildcard_constraints:
        percent=r"\d+",
    params:
        opts=as_json(config["decode"]),
        lang=tgt_lang,
        spm_tgt=spm_tgt_arg,
    threads: config["threads"]["translate"]
    conda:
        "../../envs/wordorder.yaml"
    resources:
        gpu=gpus(config["decode"]["device"]),
        mem_mb=mem_mb("translate", config["decode"]["device"]),
    shell:
        "wordorder translate --checkpoint {input.model:q} --spm {input.spm:q} {params.spm_tgt:q} --input {input.src:q}"
        " --lang {params.lang:q} --options {params.opts:q} --threads {threads}"
        " --output {output.hyp:q} --output-tok {output.tok:q} > {log:q} 2>&1"


rule swap_noise:
    input:
        ref=lambda w: f"{R}/data/{w.pair}/{w.testset}.{tgt_lang(w)}",
        hyps=lambda w: [
            f"{R}/noise/{w.pair}/swap{p}/{v}/seed{config['seeds'][0]}/{w.testset}.hyp"
            for v in subword_only_variants(w.pair)
            for p in SWAP["percents"]
        ],
    output:
        csv=f"{R}/tables/swap_noise_{{pair}}_{{testset}}.csv",
        md=f"{R}/tables/swap_noise_{{pair}}_{{testset}}.md",
        png=report(f"{R}/figures/swap_noise_{{pair}}_{{testset}}.png", caption="../report/swap_noise.rst",
                   category="Figures"),
    log:
        f"{L}/swap_noise/{{pair}}.{{testset}}.log",
    params:
        lang=tgt_lang,
        hyps=lambda w: [
            f"{v}:{p}={R}/noise/{w.pair}/swap{p}/{v}/seed{config['seeds'][0]}/{w.testset}.hyp"
            for v in subword_only_variants(w.pair)
            for p in SWAP["percents"]
        ],
        title=lambda w: f"{config['experiment']} {w.pair} {w.testset}: BLEU under swap noise",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder swap-noise-report --ref {input.ref:q} --lang {params.lang:q} --hyps {params.hyps:q}"
        " --title {params.title:q} --csv {output.csv:q} --md {output.md:q} --png {output.png:q} > {log:q} 2>&1"
