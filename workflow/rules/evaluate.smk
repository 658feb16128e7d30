# Evaluation: translate each test set, score it, and gather the scores into tables and figures.


rule translate:
    input:
        unpack(spm_inputs),  # spm (source or joint), spm_tgt
        model=MODEL,
        src=test_source,
        features=test_features,
    output:
        hyp=HYP,
        tok=HYP_TOK,
    log:
        f"{L}/translate/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    benchmark:
        TRANSLATE_BENCHMARK
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["translate"]
    resources:
        gpu=gpus(config["decode"]["device"]),
        mem_mb=mem_mb("translate", config["decode"]["device"]),
    params:
        opts=as_json(config["decode"]),
        lang=tgt_lang,
        features=test_features_json,
        spm_tgt=spm_tgt_arg,
    shell:
        "wordorder translate --checkpoint {input.model:q} --spm {input.spm:q} {params.spm_tgt:q}"
        " --input {input.src:q} --lang {params.lang:q} --options {params.opts:q}"
        " --threads {threads} --features {params.features:q} --output {output.hyp:q}"
        " --output-tok {output.tok:q} > {log:q} 2>&1"


rule score:
    input:
        hyp=rules.translate.output.hyp,
        hyp_tok=rules.translate.output.tok,
        ref=test_reference,
        ref_tok=test_reference_tok,
        extra_refs=extra_refs,
    output:
        SCORE,
    log:
        f"{L}/score/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=tgt_lang,
        refs=reference_args,
    shell:
        "wordorder score --hyp {input.hyp:q} --ref {input.ref:q} {params.refs:q}"
        " --hyp-tok {input.hyp_tok:q} --ref-tok {input.ref_tok:q} --lang {params.lang:q}"
        " --pair {wildcards.pair:q} --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
        " --testset {wildcards.testset:q} --output {output:q} > {log:q} 2>&1"


rule report:
    input:
        scores=score_files(),
        metrics=metrics_files(),
    output:
        csv=BLEU_CSV,
        md=report(BLEU_MD, caption="../report/bleu.rst", category="Tables"),
        tex=BLEU_TEX,
        generation_csv=GENERATION_CSV,
        generation_md=report(GENERATION_MD, caption="../report/generation.rst", category="Tables"),
        ngram_csv=NGRAM_CSV,
        ngram_md=report(NGRAM_MD, caption="../report/ngram.rst", category="Tables"),
        curves=report(CURVES, caption="../report/curves.rst", category="Figures"),
    log:
        f"{L}/report.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        variants=config["variants"],
        title=f"{config['experiment']}: BLEU, RIBES and chrF",
        baseline=baseline_variant(),
    shell:
        "wordorder report --scores {input.scores:q} --metrics {input.metrics:q}"
        " --baseline {params.baseline:q} --variants {params.variants:q} --title {params.title:q}"
        " --csv {output.csv:q} --md {output.md:q} --tex {output.tex:q}"
        " --generation-csv {output.generation_csv:q} --generation-md {output.generation_md:q}"
        " --ngram-csv {output.ngram_csv:q} --ngram-md {output.ngram_md:q}"
        " --curves {output.curves:q} > {log:q} 2>&1"


rule length_analysis:
    input:
        src=test_source_tok,
        ref=test_reference,
        hyps=length_hyps,
        align=length_align,
        perms=length_perms,
    output:
        csv=LENGTH_CSV,
        md=LENGTH_MD,
        png=report(LENGTH_FIGURE, caption="../report/length.rst", category="Figures"),
    log:
        f"{L}/length_analysis/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        lang=tgt_lang,
        hyps=length_hyp_args,
        edges=[str(e) for e in config["evaluation"]["length_bins"]],
        title=length_title,
        tau=length_tau_args,
    shell:
        "wordorder length-analysis --src-tok {input.src:q} --ref {input.ref:q}"
        " --lang {params.lang:q} --hyps {params.hyps:q} --edges {params.edges:q}"
        " --title {params.title:q} {params.tau:q} --csv {output.csv:q} --md {output.md:q}"
        " --png {output.png:q} > {log:q} 2>&1"


rule systems:
    input:
        files=systems_files(),
    output:
        csv=SYSTEMS_CSV,
        md=report(SYSTEMS_MD, caption="../report/systems.rst", category="Tables"),
    log:
        f"{L}/systems.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        runs=systems_json(),
        baseline=baseline_variant(),
        title=f"{config['experiment']}: parameters and speed of the systems",
    shell:
        "wordorder systems-table --runs {params.runs:q} --baseline {params.baseline:q}"
        " --title {params.title:q} --csv {output.csv:q} --md {output.md:q} > {log:q} 2>&1"


rule attention_aer:
    input:
        unpack(spm_inputs),  # spm (source or joint), spm_tgt
        model=MODEL,
        gold=gold_files,
    output:
        json=AER_JSON,
        links=AER_LINKS,
    log:
        f"{L}/attention_aer/{{pair}}.{{variant}}.seed{{seed}}.log",
    conda:
        "../../envs/wordorder.yaml"
    threads: config["threads"]["translate"]
    params:
        swap=gold_swap_arg,
        spm_tgt=spm_tgt_arg,
    shell:
        "wordorder attention-aer --checkpoint {input.model:q} --spm {input.spm:q}"
        " {params.spm_tgt:q} --gold-pairs {input.gold[0]:q}"
        " --gold-links {input.gold[1]:q} {params.swap:q} --pair {wildcards.pair:q}"
        " --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
        " --output {output.json:q} --alignments {output.links:q} > {log:q} 2>&1"


rule aer_table:
    input:
        results=aer_results,
        aligners=aer_aligner_stats,
    output:
        csv=AER_CSV,
        md=report(AER_MD, caption="../report/aer.rst", category="Tables"),
    log:
        f"{L}/aer_table.log",
    conda:
        "../../envs/wordorder.yaml"
    shell:
        "wordorder aer-table --results {input.results:q} --aligners {input.aligners:q}"
        " --csv {output.csv:q} --md {output.md:q} > {log:q} 2>&1"


rule head_similarity:
    input:
        model=MODEL,
        spm=source_spm,
        src=test_source,
        features=test_features,
    output:
        HEADS,
    log:
        f"{L}/head_similarity/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        features=test_features_json,
    shell:
        "wordorder head-similarity --checkpoint {input.model:q} --spm {input.spm:q}"
        " --input {input.src:q} --features {params.features:q} --pair {wildcards.pair:q}"
        " --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
        " --testset {wildcards.testset:q} --output {output:q} > {log:q} 2>&1"


rule head_similarity_table:
    input:
        head_similarity_results,
    output:
        report(HEAD_SIMILARITY_MD, caption="../report/head_similarity.rst", category="Tables"),
    log:
        f"{L}/head_similarity_table/{{pair}}.{{testset}}.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        title=head_similarity_title,
    shell:
        "wordorder head-similarity-table --results {input:q} --title {params.title:q}"
        " --md {output:q} > {log:q} 2>&1"
