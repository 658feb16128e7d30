# Evaluation: translate each test set, score it, and gather the scores into tables and figures.


rule translate:
    input:
        unpack(EX.spm_inputs),  # spm (source or joint), spm_tgt
        model=P.MODEL,
        src=EX.test_source,
        features=EX.test_features,
    output:
        hyp=P.HYP,
        tok=P.HYP_TOK,
    log:
        f"{L}/translate/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    benchmark:
        P.TRANSLATE_BENCHMARK
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["translate"]
    resources:
        gpu=gpus(config["decode"]["device"]),
        mem_mb=mem_mb("translate", config["decode"]["device"]),
    params:
        opts=as_json(config["decode"]),
        lang=EX.tgt_lang,
        features=EX.test_features_json,
        spm_tgt=EX.spm_tgt_arg,
    shell:
        "wordorder translate --checkpoint {input.model:q} --spm {input.spm:q} {params.spm_tgt:q}"
        " --input {input.src:q} --lang {params.lang:q} --options {params.opts:q}"
        " --threads {threads} --features {params.features:q} --output {output.hyp:q}"
        " --output-tok {output.tok:q} > {log:q} 2>&1"


rule score:
    input:
        hyp=rules.translate.output.hyp,
        hyp_tok=rules.translate.output.tok,
        ref=EX.test_reference,
        ref_tok=EX.test_reference_tok,
        extra_refs=EX.extra_refs,
    output:
        P.SCORE,
    log:
        f"{L}/score/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=EX.tgt_lang,
        refs=EX.extra_ref_args,
        scoring=EX.scoring_args,
    shell:
        "wordorder score --hyp {input.hyp:q} --ref {input.ref:q} {params.refs:q} {params.scoring:q}"
        " --hyp-tok {input.hyp_tok:q} --ref-tok {input.ref_tok:q} --lang {params.lang:q}"
        " --pair {wildcards.pair:q} --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
        " --testset {wildcards.testset:q} --output {output:q} > {log:q} 2>&1"


rule report:
    input:
        scores=EX.score_files(),
        metrics=EX.metrics_files(),
    output:
        csv=P.BLEU_CSV,
        md=report(P.BLEU_MD, caption="../report/bleu.rst", category="Tables"),
        tex=P.BLEU_TEX,
        generation_csv=P.GENERATION_CSV,
        generation_md=report(P.GENERATION_MD, caption="../report/generation.rst", category="Tables"),
        ngram_csv=P.NGRAM_CSV,
        ngram_md=report(P.NGRAM_MD, caption="../report/ngram.rst", category="Tables"),
        curves=report(P.CURVES, caption="../report/curves.rst", category="Figures"),
    log:
        f"{L}/report.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        variants=config["variants"],
        title=f"{config['experiment']}: BLEU, RIBES and chrF",
        baseline=EX.baseline_variant(),
    shell:
        "wordorder report --scores {input.scores:q} --metrics {input.metrics:q}"
        " --baseline {params.baseline:q} --variants {params.variants:q} --title {params.title:q}"
        " --csv {output.csv:q} --md {output.md:q} --tex {output.tex:q}"
        " --generation-csv {output.generation_csv:q} --generation-md {output.generation_md:q}"
        " --ngram-csv {output.ngram_csv:q} --ngram-md {output.ngram_md:q}"
        " --curves {output.curves:q} > {log:q} 2>&1"


rule length_analysis:
    input:
        src=EX.test_source_tok,
        ref=EX.test_reference,
        hyps=EX.length_hyps,
        align=EX.length_align,
        perms=EX.length_perms,
    output:
        csv=P.LENGTH_CSV,
        md=P.LENGTH_MD,
        png=report(P.LENGTH_FIGURE, caption="../report/length.rst", category="Figures"),
    log:
        f"{L}/length_analysis/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=EX.tgt_lang,
        hyps=EX.length_hyp_args,
        edges=[str(e) for e in config["evaluation"]["length_bins"]],
        title=EX.length_title,
        tau=EX.length_tau_args,
    shell:
        "wordorder length-analysis --src-tok {input.src:q} --ref {input.ref:q}"
        " --lang {params.lang:q} --hyps {params.hyps:q} --edges {params.edges:q}"
        " --title {params.title:q} {params.tau:q} --csv {output.csv:q} --md {output.md:q}"
        " --png {output.png:q} > {log:q} 2>&1"


rule systems:
    input:
        files=EX.systems_files(),
    output:
        csv=P.SYSTEMS_CSV,
        md=report(P.SYSTEMS_MD, caption="../report/systems.rst", category="Tables"),
    log:
        f"{L}/systems.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        runs=EX.systems_json(),
        baseline=EX.baseline_variant(),
        title=f"{config['experiment']}: parameters and speed of the systems",
    shell:
        "wordorder systems-table --runs {params.runs:q} --baseline {params.baseline:q}"
        " --title {params.title:q} --csv {output.csv:q} --md {output.md:q} > {log:q} 2>&1"


rule attention_aer:
    input:
        unpack(EX.spm_inputs),  # spm (source or joint), spm_tgt
        model=P.MODEL,
        gold=EX.gold_files,
    output:
        json=P.AER_JSON,
        links=P.AER_LINKS,
    log:
        f"{L}/attention_aer/{{pair}}.{{variant}}.seed{{seed}}.log",
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["translate"]
    params:
        swap=EX.gold_swap_arg,
        spm_tgt=EX.spm_tgt_arg,
    shell:
        "wordorder attention-aer --checkpoint {input.model:q} --spm {input.spm:q}"
        " {params.spm_tgt:q} --gold-pairs {input.gold[0]:q}"
        " --gold-links {input.gold[1]:q} {params.swap:q} --pair {wildcards.pair:q}"
        " --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
        " --output {output.json:q} --alignments {output.links:q} > {log:q} 2>&1"


rule aer_table:
    input:
        results=EX.aer_results,
        aligners=EX.aer_aligner_stats,
    output:
        csv=P.AER_CSV,
        md=report(P.AER_MD, caption="../report/aer.rst", category="Tables"),
    log:
        f"{L}/aer_table.log",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder aer-table --results {input.results:q} --aligners {input.aligners:q}"
        " --csv {output.csv:q} --md {output.md:q} > {log:q} 2>&1"


rule head_similarity:
    input:
        model=P.MODEL,
        spm=EX.source_spm,
        src=EX.test_source,
        features=EX.test_features,
    output:
        P.HEADS,
    log:
        f"{L}/head_similarity/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        features=EX.test_features_json,
    shell:
        "wordorder head-similarity --checkpoint {input.model:q} --spm {input.spm:q}"
        " --input {input.src:q} --features {params.features:q} --pair {wildcards.pair:q}"
        " --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
        " --testset {wildcards.testset:q} --output {output:q} > {log:q} 2>&1"


rule head_similarity_table:
    input:
        EX.head_similarity_results,
    output:
        report(P.HEAD_SIMILARITY_MD, caption="../report/head_similarity.rst", category="Tables"),
    log:
        f"{L}/head_similarity_table/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        title=EX.head_similarity_title,
    shell:
        "wordorder head-similarity-table --results {input:q} --title {params.title:q}"
        " --md {output:q} > {log:q} 2>&1"
