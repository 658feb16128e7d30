# Evaluation: translate each test set, score it, and gather the scores into tables and figures.


rule translate:
    input:
        unpack(spm_inputs),  # spm (source or joint), spm_tgt
        model=f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/best.pt",
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
        spm_tgt=spm_tgt_arg,
    threads: config["threads"]["translate"]
    resources:
        gpu=gpus(config["decode"]["device"]),
        mem_mb=mem_mb("translate", config["decode"]["device"]),
    shell:
        "wordorder translate --checkpoint {input.model:q} --spm {input.spm:q} {params.spm_tgt:q} --input {input.src:q}"
        " --lang {params.lang:q} --options {params.opts:q} --threads {threads} --features {params.features:q}"
        " --output {output.hyp:q} --output-tok {output.tok:q} > {log:q} 2>&1"


rule score:
    input:
        hyp=rules.translate.output.hyp,
        hyp_tok=rules.translate.output.tok,
        ref=lambda w: f"{R}/data/{w.pair}/{w.testset}.{tgt_lang(w)}",
        ref_tok=lambda w: f"{R}/data/{w.pair}/{w.testset}.tok.{tgt_lang(w)}",
        extra_refs=extra_refs,
    output:
        f"{R}/scores/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.json",
    log:
        f"{L}/score/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=tgt_lang,
        refs=reference_args,
    shell:
        "wordorder score --hyp {input.hyp:q} --ref {input.ref:q} {params.refs:q} --hyp-tok {input.hyp_tok:q}"
        " --ref-tok {input.ref_tok:q} --lang {params.lang:q} --pair {wildcards.pair:q}"
        " --variant {wildcards.variant:q} --seed {wildcards.seed:q} --testset {wildcards.testset:q}"
        " --output {output:q} > {log:q} 2>&1"


rule significance:
    input:
        hyp=rules.translate.output.hyp,
        baseline=lambda w: f"{R}/translations/{w.pair}/{baseline_variant()}/seed{w.seed}/{w.testset}.hyp",
        ref=lambda w: f"{R}/data/{w.pair}/{w.testset}.{tgt_lang(w)}",
        extra_refs=extra_refs,
    output:
        f"{R}/significance/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.json",
    log:
        f"{L}/significance/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=tgt_lang,
        baseline=baseline_variant(),
        samples=config["evaluation"]["significance"]["samples"],
        refs=reference_args,
    shell:
        "wordorder significance --hyp {input.hyp:q} --baseline-hyp {input.baseline:q} --ref {input.ref:q} {params.refs:q}"
        " --lang {params.lang:q} --pair {wildcards.pair:q} --variant {wildcards.variant:q}"
        " --baseline {params.baseline:q} --seed {wildcards.seed:q} --testset {wildcards.testset:q}"
        " --samples {params.samples:q} --output {output:q} > {log:q} 2>&1"


rule report:
    input:
        scores=[
            f"{R}/scores/{r['pair']}/{r['variant']}/seed{r['seed']}/{t}.json"
            for r in runs()
            for t in testsets(r["pair"])
        ],
        significance=[
            f"{R}/significance/{r['pair']}/{r['variant']}/seed{r['seed']}/{t}.json"
            for r in runs()
            if r["variant"] != baseline_variant()
            for t in testsets(r["pair"])
        ],
        metrics=[f"{R}/models/{r['pair']}/{r['variant']}/seed{r['seed']}/metrics.jsonl" for r in runs()],
    output:
        csv=f"{R}/tables/bleu.csv",
        md=report(f"{R}/tables/bleu.md", caption="../report/bleu.rst", category="Tables"),
        tex=f"{R}/tables/bleu.tex",
        generation_csv=f"{R}/tables/generation.csv",
        generation_md=report(f"{R}/tables/generation.md", caption="../report/generation.rst", category="Tables"),
        ngram_csv=f"{R}/tables/ngram_precision.csv",
        ngram_md=report(f"{R}/tables/ngram_precision.md", caption="../report/ngram.rst", category="Tables"),
        curves=report(f"{R}/figures/training_curves.png", caption="../report/curves.rst", category="Figures"),
    log:
        f"{L}/report.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        variants=config["variants"],
        title=f"{config['experiment']}: BLEU, RIBES and chrF",
        baseline=baseline_variant(),
        test=config["evaluation"]["significance"]["test"],
    shell:
        "wordorder report --scores {input.scores:q} --metrics {input.metrics:q}"
        " --significance {input.significance:q} --test {params.test:q} --baseline {params.baseline:q}"
        " --variants {params.variants:q} --title {params.title:q}"
        " --csv {output.csv:q} --md {output.md:q} --tex {output.tex:q} --generation-csv {output.generation_csv:q}"
        " --generation-md {output.generation_md:q} --ngram-csv {output.ngram_csv:q} --ngram-md {output.ngram_md:q}"
        " --curves {output.curves:q} > {log:q} 2>&1"


rule length_analysis:
    input:
        src=lambda w: f"{R}/data/{w.pair}/{w.testset}.tok.{src_lang(w)}",
        ref=lambda w: f"{R}/data/{w.pair}/{w.testset}.{tgt_lang(w)}",
        hyps=lambda w: [
            f"{R}/translations/{w.pair}/{v}/seed{config['seeds'][0]}/{w.testset}.hyp" for v in config["variants"]
        ],
        # With preordering: Kendall τ of each order per bin (Kawara 2021 Figs 7-10).
        align=lambda w: [f"{R}/data/{w.pair}/{w.testset}.align"] if METHODS else [],
        perms=lambda w: [f"{R}/preorder/{w.pair}/{m}/{w.testset}.perm" for m in METHODS],
    output:
        csv=f"{R}/tables/length_{{pair}}_{{testset}}.csv",
        md=f"{R}/tables/length_{{pair}}_{{testset}}.md",
        png=report(f"{R}/figures/bleu_by_length_{{pair}}_{{testset}}.png", caption="../report/length.rst",
                   category="Figures"),
    log:
        f"{L}/length_analysis/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=tgt_lang,
        hyps=lambda w, input: [f"{v}={h}" for v, h in zip(config["variants"], input.hyps)],
        edges=[str(e) for e in config["evaluation"]["length_bins"]],
        title=lambda w: f"{config['experiment']} {w.pair} {w.testset}: BLEU by source length (seed {config['seeds'][0]})",
        tau=lambda w, input: (["--align", input.align[0], "--perms", *(f"{m}={p}" for m, p in zip(METHODS, input.perms))]
                              if METHODS else []),
    shell:
        "wordorder length-analysis --src-tok {input.src:q} --ref {input.ref:q} --lang {params.lang:q}"
        " --hyps {params.hyps:q} --edges {params.edges:q} --title {params.title:q} {params.tau:q}"
        " --csv {output.csv:q} --md {output.md:q} --png {output.png:q} > {log:q} 2>&1"


# "model", not "checkpoint": the latter is a Snakemake keyword even inside a dict literal.
def _system_runs():
    from types import SimpleNamespace

    return [
        dict(
            r,
            model=f"{R}/models/{r['pair']}/{r['variant']}/seed{r['seed']}/best.pt",
            metrics=f"{R}/models/{r['pair']}/{r['variant']}/seed{r['seed']}/metrics.jsonl",
            decodes=[
                [
                    variant_source(SimpleNamespace(pair=r["pair"], variant=r["variant"]), t),
                    f"{R}/benchmarks/translate/{r['pair']}.{r['variant']}.seed{r['seed']}.{t}.tsv",
                ]
                for t in testsets(r["pair"])
            ],
        )
        for r in runs()
    ]


rule systems:
    input:
        files=[f for r in _system_runs() for f in (r["model"], r["metrics"], *(x for d in r["decodes"] for x in d))],
    output:
        csv=f"{R}/tables/systems.csv",
        md=report(f"{R}/tables/systems.md", caption="../report/systems.rst", category="Tables"),
    log:
        f"{L}/systems.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        runs=as_json({"runs": _system_runs()}),
        baseline=baseline_variant(),
        title=f"{config['experiment']}: parameters and speed of the systems",
    shell:
        "wordorder systems-table --runs {params.runs:q} --baseline {params.baseline:q}"
        " --title {params.title:q} --csv {output.csv:q} --md {output.md:q} > {log:q} 2>&1"


rule attention_aer:
    input:
        unpack(spm_inputs),  # spm (source or joint), spm_tgt
        model=f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/best.pt",
        gold=lambda w: [align_gold(w.pair)[k] for k in ("pairs", "links")],
    output:
        json=f"{R}/aer/{{pair}}/{{variant}}/seed{{seed}}.json",
        links=f"{R}/aer/{{pair}}/{{variant}}/seed{{seed}}.align",
    log:
        f"{L}/attention_aer/{{pair}}.{{variant}}.seed{{seed}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        swap=lambda w: ["--gold-swap"] if align_gold(w.pair).get("swap") else [],
        spm_tgt=spm_tgt_arg,
    threads: config["threads"]["translate"]
    shell:
        "wordorder attention-aer --checkpoint {input.model:q} --spm {input.spm:q} {params.spm_tgt:q}"
        " --gold-pairs {input.gold[0]:q}"
        " --gold-links {input.gold[1]:q} {params.swap:q} --pair {wildcards.pair:q} --variant {wildcards.variant:q}"
        " --seed {wildcards.seed:q} --output {output.json:q} --alignments {output.links:q} > {log:q} 2>&1"


def aer_pairs():
    return [p for p in config["pairs"] if align_gold(p)]


rule aer_table:
    input:
        results=lambda w: [f"{R}/aer/{p}/{v}/seed{s}.json" for p in aer_pairs() for v in subword_only_variants(p)
                           for s in config["seeds"]],
        aligners=lambda w: [f"{R}/data/{p}/align/stats.json" for p in aer_pairs()],
    output:
        csv=f"{R}/tables/aer.csv",
        md=report(f"{R}/tables/aer.md", caption="../report/aer.rst", category="Tables"),
    log:
        f"{L}/aer_table.log",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder aer-table --results {input.results:q} --aligners {input.aligners:q}"
        " --csv {output.csv:q} --md {output.md:q} > {log:q} 2>&1"


def transformer_variants():
    return [v for v in config["variants"] if VARIANTS[v]["model"].get("family", "transformer") == "transformer"]


def head_similarity_targets():
    if not config["evaluation"]["head_similarity"] or not transformer_variants():
        return []
    return [f"{R}/tables/head_similarity_{p}_{t}.md" for p in config["pairs"] for t in testsets(p)]


rule head_similarity:
    input:
        model=f"{R}/models/{{pair}}/{{variant}}/seed{{seed}}/best.pt",
        spm=lambda w: spm_inputs(w)["spm"],  # the source side's (or the joint) model
        src=lambda w: variant_source(w, w.testset),
        features=lambda w: list(variant_features(w, w.testset).values()),
    output:
        f"{R}/heads/{{pair}}/{{variant}}/seed{{seed}}/{{testset}}.json",
    log:
        f"{L}/head_similarity/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        features=lambda w: as_json(variant_features(w, w.testset)),
    shell:
        "wordorder head-similarity --checkpoint {input.model:q} --spm {input.spm:q} --input {input.src:q}"
        " --features {params.features:q} --pair {wildcards.pair:q} --variant {wildcards.variant:q}"
        " --seed {wildcards.seed:q} --testset {wildcards.testset:q} --output {output:q} > {log:q} 2>&1"


rule head_similarity_table:
    input:
        lambda w: [f"{R}/heads/{w.pair}/{v}/seed{s}/{w.testset}.json" for v in transformer_variants()
                   for s in config["seeds"]],
    output:
        report(f"{R}/tables/head_similarity_{{pair}}_{{testset}}.md", caption="../report/head_similarity.rst",
               category="Tables"),
    log:
        f"{L}/head_similarity_table/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        title=lambda w: f"{config['experiment']} {w.pair} {w.testset}: head similarity between feature groups",
    shell:
        "wordorder head-similarity-table --results {input:q} --title {params.title:q} --md {output:q} > {log:q} 2>&1"
