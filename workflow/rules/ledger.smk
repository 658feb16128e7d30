# The run ledger (config key ledger; src/wordorder/ledger): a run it holds is restored from it
# and never retrained; a run it lacks is recorded once trained and decoded. Its helpers are in
# common.smk (the run ledger section), its paths in paths.smk.


if LEDGER:

    ruleorder: ledger_training > train
    ruleorder: ledger_translation > translate

    rule ledger_training:
        input:
            ledger_record,
        output:
            METRICS,
        log:
            f"{L}/ledger/restore/{{pair}}.{{variant}}.seed{{seed}}.log",
        conda:
            "../../envs/wordorder.yaml"
        params:
            ledger=LEDGER,
            config=ledger_config_json,
            logs=f"{L}/ledger",
        shell:
            "wordorder ledger-restore --ledger {params.ledger:q} --pair {wildcards.pair:q}"
            " --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
            " --config {params.config:q} --metrics {output:q} --log-dir {params.logs:q}"
            " > {log:q} 2>&1"

    rule ledger_translation:
        input:
            record=ledger_record,
            refs=lambda w: [test_reference(w), *extra_refs(w)],
        output:
            hyp=HYP,
            tok=HYP_TOK,
            benchmark=TRANSLATE_BENCHMARK,
        log:
            f"{L}/ledger/restore/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
        conda:
            "../../envs/wordorder.yaml"
        params:
            ledger=LEDGER,
            config=ledger_config_json,
            logs=f"{L}/ledger",
            root=R,
        shell:
            "wordorder ledger-restore --ledger {params.ledger:q} --pair {wildcards.pair:q}"
            " --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
            " --config {params.config:q} --testset {wildcards.testset:q}"
            " --hyp {output.hyp:q} --hyp-tok {output.tok:q} --benchmark {output.benchmark:q}"
            " --reference {input.refs:q} --root {params.root:q} --log-dir {params.logs:q}"
            " > {log:q} 2>&1"

    rule ledger_add:
        input:
            unpack(ledger_add_inputs),
        output:
            LEDGER_MARK,
        log:
            f"{L}/ledger/add/{{pair}}.{{variant}}.seed{{seed}}.log",
        conda:
            "../../envs/wordorder.yaml"
        params:
            ledger=LEDGER,
            experiment=config["experiment"],
            root=R,
            config=ledger_config_json,
            spec=ledger_spec_json,
        shell:
            "wordorder ledger-add --ledger {params.ledger:q} --experiment {params.experiment:q}"
            " --root {params.root:q} --pair {wildcards.pair:q} --variant {wildcards.variant:q}"
            " --seed {wildcards.seed:q} --config {params.config:q} --spec {params.spec:q}"
            " --output {output:q} > {log:q} 2>&1"

    # The inputs the ledger's runs read, kept in it: restored where one rule makes them alone,
    # not rebuilt, so every machine trains on the same files.
    LEDGER_INPUTS = [k for k in ledger.stored_inputs(LEDGER) if ledger_restorable(k)]
    if LEDGER_INPUTS:

        rule ledger_input:
            output:
                f"{R}/{{ledger_input,{_one_of(LEDGER_INPUTS)}}}",
            log:
                f"{L}/ledger/input/{{ledger_input}}.log",
            conda:
                "../../envs/wordorder.yaml"
            params:
                ledger=LEDGER,
            shell:
                "wordorder ledger-input --ledger {params.ledger:q}"
                " --key {wildcards.ledger_input:q} --output {output:q} > {log:q} 2>&1"

        # before every rule that makes the same file here
        for _rule in list(workflow.rules):
            if _rule.name != "ledger_input":
                workflow.ruleorder("ledger_input", _rule.name)
