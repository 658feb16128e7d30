# The run ledger (config key ledger; src/wordorder/ledger): a run it holds is restored from it
# and never retrained; a run it lacks is recorded once trained and decoded.

LEDGER = config["ledger"]
LEDGERED = ledger.ledgered_runs(LEDGER)
LEDGER_MARK = f"{R}/ledger/{{pair}}.{{variant}}.seed{{seed}}.json"


def in_ledger(w):
    return ledger.run_name(w.pair, w.variant, w.seed) in LEDGERED


def ledger_no_model(w):
    return ledger.no_checkpoint(ledger.run_name(w.pair, w.variant, w.seed), LEDGER)


def ledger_record(w):
    # Missing for a run the ledger lacks: Snakemake then takes train / translate instead.
    return f"{LEDGER}/runs/{ledger.run_name(w.pair, w.variant, w.seed)}/record.json"


def ledger_config_json(w):
    return as_json(ledger.run_settings(config, model_options(w), int(w.seed)))


def ledger_test_files(w, testset):
    t = SimpleNamespace(pair=w.pair, variant=w.variant, seed=w.seed, testset=testset)
    out = dict(hyp=HYP, tok=HYP_TOK, benchmark=TRANSLATE_BENCHMARK)
    return {k: v.format(**vars(t)) for k, v in out.items()} | dict(
        src=test_source(t), features=test_features(t), ref=[test_reference(t), *extra_refs(t)]
    )


def ledger_perms(w):
    # the permutations behind a variant's preorder positions (eflomal's alignments differ
    # from run to run, so the ledger keeps them: another machine projects the same positions)
    method, splits = variant_entry(w).get("preorder"), ["train", "dev", *testsets(w.pair)]
    return [PERM.format(pair=w.pair, method=method, split=s) for s in splits] if method else []


def ledger_add_inputs(w):
    tests = [ledger_test_files(w, t) for t in testsets(w.pair)]
    train = train_inputs(w) | {"perm": ledger_perms(w)}
    return ledger.ledger_inputs(METRICS.format(**w), train, tests)


def ledger_restorable(key):
    # a file some rule makes beside others (select, subword_train) is rebuilt, not restored:
    # two jobs would write it
    producers = [r for r in workflow.rules if r.is_producer(f"{R}/{key}")]
    return all(len(r.output) == 1 for r in producers)


def ledger_spec_json(w, input):
    named = dict(input.items())
    args = (w.pair, w.variant, w.seed, named, testsets(w.pair), L, config["threads"])
    return as_json(ledger.ledger_spec(*args))


def ledger_targets():
    todo = [r for r in runs() if ledger.run_name(**r) not in LEDGERED]
    return [LEDGER_MARK.format(**r) for r in todo] if LEDGER else []


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
