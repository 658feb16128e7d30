# The run ledger (config key ledger; src/wordorder/ledger): a run it holds is restored from it
# and never retrained; a run it lacks is recorded once trained and decoded. Its helpers are
# EX's (src/wordorder/flow/ledgered.py).


if LEDGER:

    ruleorder: ledger_training > train
    ruleorder: ledger_translation > translate

    rule ledger_training:
        input:
            EX.ledger_record,
        output:
            P.METRICS,
        log:
            f"{L}/ledger/restore/{{pair}}.{{variant}}.seed{{seed}}.log",
        conda:
            "../../envs/wordorder.yaml"
        params:
            ledger=LEDGER,
            config=EX.ledger_config_json,
            logs=f"{L}/ledger",
        shell:
            "wordorder ledger-restore --ledger {params.ledger:q} --pair {wildcards.pair:q}"
            " --variant {wildcards.variant:q} --seed {wildcards.seed:q}"
            " --config {params.config:q} --metrics {output:q} --log-dir {params.logs:q}"
            " > {log:q} 2>&1"

    rule ledger_translation:
        input:
            record=EX.ledger_record,
            refs=EX.references,
        output:
            hyp=P.HYP,
            tok=P.HYP_TOK,
            benchmark=P.TRANSLATE_BENCHMARK,
        log:
            f"{L}/ledger/restore/{{pair}}.{{variant}}.seed{{seed}}.{{testset}}.log",
        conda:
            "../../envs/wordorder.yaml"
        params:
            ledger=LEDGER,
            config=EX.ledger_config_json,
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
            unpack(EX.ledger_add_inputs),
        output:
            P.LEDGER_MARK,
        log:
            f"{L}/ledger/add/{{pair}}.{{variant}}.seed{{seed}}.log",
        conda:
            "../../envs/wordorder.yaml"
        params:
            ledger=LEDGER,
            experiment=config["experiment"],
            root=R,
            config=EX.ledger_config_json,
            spec=EX.ledger_spec_json,
        shell:
            "wordorder ledger-add --ledger {params.ledger:q} --experiment {params.experiment:q}"
            " --root {params.root:q} --pair {wildcards.pair:q} --variant {wildcards.variant:q}"
            " --seed {wildcards.seed:q} --config {params.config:q} --spec {params.spec:q}"
            " --output {output:q} > {log:q} 2>&1"

    # The inputs the ledger's runs read, kept in it: restored where one rule makes them alone,
    # not rebuilt, so every machine trains on the same files.
    LEDGER_INPUTS = EX.ledger_inputs(workflow.rules)
    if LEDGER_INPUTS:

        rule ledger_input:
            output:
                f"{R}/{{ledger_input,{one_of(LEDGER_INPUTS)}}}",
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
