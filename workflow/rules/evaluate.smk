# Evaluation: translate each test set, score it, and gather the scores into tables and figures.


rule translate:
    input:
        model=f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/best.pt",
        spm=f"{R}/data/{{pair}}/spm.model",
        src=lambda w: variant_source(w, w.testset),
        features=lambda w: list(variant_features(w, w.testset).values()),
    output:
        hyp=f"{R}/translations/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.hyp",
        tok=f"{R}/translations/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.hyp.tok",
    log:
        f"{L}/translate/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    benchmark:
        f"{R}/benchmarks/translate/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.tsv"
    params:
        opts=as_json(config["decode"]),
        lang=tgt_lang,
        features=lambda w: as_json(variant_features(w, w.testset)),
    threads: config["threads"]["translate"]
    shell:
        "wordorder translate --checkpoint {input.model} --spm {input.spm} --input {input.src}"
        " --lang {params.lang} --options {params.opts:q} --threads {threads} --features {params.features:q}"
        " --output {output.hyp} --output-tok {output.tok} > {log} 2>&1"


rule score:
    input:
        hyp=rules.translate.output.hyp,
        hyp_tok=rules.translate.output.tok,
        ref=lambda w: f"{R}/data/{w.pair}/{w.testset}.{tgt_lang(w)}",
        ref_tok=lambda w: f"{R}/data/{w.pair}/{w.testset}.tok.{tgt_lang(w)}",
    output:
        f"{R}/scores/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.json",
    log:
        f"{L}/score/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=tgt_lang,
    shell:
        "wordorder score --hyp {input.hyp} --ref {input.ref} --hyp-tok {input.hyp_tok}"
        " --ref-tok {input.ref_tok} --lang {params.lang} --pair {wildcards.pair}"
        " --variant {wildcards.variant} --seed {wildcards.seed} --testset {wildcards.testset}"
        " --output {output} > {log} 2>&1"


rule report:
    input:
        scores=[
            f"{R}/scores/{r['pair']}/{r['variant']}/seed{r['seed']}/{t}.json"
            for r in runs()
            for t in testsets(r["pair"])
        ],
        metrics=[f"{R}/models/{r['pair']}/{r['variant']}/seed{r['seed']}/metrics.jsonl" for r in runs()],
    output:
        csv=f"{R}/tables/bleu.csv",
        md=f"{R}/tables/bleu.md",
        curves=f"{R}/figures/training_curves.png",
    log:
        f"{L}/report.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        variants=" ".join(config["variants"]),
        title=f"{config['experiment']}: BLEU and chrF",
    shell:
        "wordorder report --scores {input.scores} --metrics {input.metrics}"
        " --variants {params.variants} --title {params.title:q}"
        " --csv {output.csv} --md {output.md} --curves {output.curves} > {log} 2>&1"
