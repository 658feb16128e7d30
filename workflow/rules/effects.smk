# Findings: each paper's claimed BLEU difference (evaluation.findings) against ours, over seeds.
from types import SimpleNamespace


def findings_claims():
    """The claims this run can answer: pair, system and baseline all in the run."""
    return [c for c in config["evaluation"]["findings"]
            if c["pair"] in config["pairs"] and {c["system"], c["baseline"]} <= set(config["variants"])]


def findings_targets():
    targets = expand(f"{R}/tables/findings.{{ext}}", ext=["md", "json"]) if findings_claims() else []
    if config["evaluation"]["cross_paper"]:
        targets += expand(f"{R}/tables/cross_paper.{{ext}}", ext=["md", "csv"])
    return targets


def _hyp(pair, variant, seed, testset):
    return f"{R}/translations/{pair}/{variant}/seed{seed}/{testset}.hyp"


def findings_spec(wildcards=None):
    claims = []
    for c in findings_claims():
        w = SimpleNamespace(pair=c["pair"], testset=c["testset"])
        claims.append({**c, "lang": tgt_lang(w), "lowercase": c["pair"] in config["evaluation"]["case_insensitive"],
                       "system_hyps": [_hyp(c["pair"], c["system"], s, c["testset"]) for s in config["seeds"]],
                       "baseline_hyps": [_hyp(c["pair"], c["baseline"], s, c["testset"]) for s in config["seeds"]],
                       "refs": [f"{R}/data/{c['pair']}/{c['testset']}.{tgt_lang(w)}", *extra_refs(w)]})
    return as_json({"title": f"{config['experiment']}: the papers' effects", "claims": claims})


def findings_inputs(wildcards):
    claims = json.loads(findings_spec())["claims"]
    return sorted({f for c in claims for f in (*c["system_hyps"], *c["baseline_hyps"], *c["refs"])})


rule findings:
    input:
        findings_inputs,
    output:
        md=f"{R}/tables/findings.md",
        json=f"{R}/tables/findings.json",
    log:
        f"{L}/findings.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        spec=findings_spec,
        samples=config["evaluation"]["significance"]["samples"],
        logs=L,
    shell:
        "wordorder findings --spec {params.spec:q} --samples {params.samples:q} --md {output.md:q}"
        " --json {output.json:q} --logs {params.logs:q} > {log:q} 2>&1"


rule cross_paper:
    input:
        scores=rules.report.input.scores,
        significance=rules.report.input.significance,
        systems=rules.systems.output.csv,
    output:
        csv=f"{R}/tables/cross_paper.csv",
        md=f"{R}/tables/cross_paper.md",
    log:
        f"{L}/cross_paper.log",
    conda:
        "../../envs/wordorder.yaml"
    params:
        baseline=baseline_variant(),
        test=config["evaluation"]["significance"]["test"],
        title=f"{config['experiment']}: every system on the same data, sorted by BLEU",
    shell:
        "wordorder cross-paper-table --scores {input.scores:q} --significance {input.significance:q}"
        " --systems {input.systems:q} --baseline {params.baseline:q} --test {params.test:q}"
        " --title {params.title:q} --csv {output.csv:q} --md {output.md:q} > {log:q} 2>&1"
