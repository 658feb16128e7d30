# wordorder: word order in neural machine translation, from raw corpora to result tables.
#   snakemake --cores 2                                      the demo (configs/default.yaml)
#   snakemake --cores all --configfile configs/<paper>.yaml  one paper
# Outputs: results/<experiment>/   Logs: logs/<experiment>/
from snakemake.utils import min_version

from wordorder.config import validate_schema

from wordorder.configfiles import check_config_files
from wordorder import lock, warm

min_version("9.0")


# The demo config unless the user names one (Snakemake would otherwise deep-merge the two).
if not workflow.config_settings.configfiles:

    configfile: "configs/default.yaml"


# Snakemake's YAML loader keeps the last of two equal keys: read the files again, strictly
# (also a repeated seed, pair or variant, with its file and line).
CONFIG_FILES = check_config_files(
    workflow.config_settings.configfiles or ["configs/default.yaml"], config
)
# wordorder's validation (as `wordorder check-config`): one error line naming the key and, for
# a refused name or path, the rule it breaks; it fills in the defaults as Snakemake's would.
validate_schema(
    config,
    "config.schema.yaml",
    path=", ".join(map(str, workflow.config_settings.configfiles)) or None,
)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"  # EX: the experiment (src/wordorder/flow), P: its paths
include: "workflow/rules/corpus.smk"  # fetch -> tokenize -> clean + split
include: "workflow/rules/syntax.smk"  # parse (scatter/gather) -> POS, BIEO, heads, binary trees
include: "workflow/rules/subword.smk"  # joint sentencepiece BPE
include: "workflow/rules/preorder.smk"  # eflomal alignment -> gold, BTG, RvNN preorders -> tau, FRS
include: "workflow/rules/train.smk"  # one model per (pair, variant, seed)
include: "workflow/rules/evaluate.smk"  # translate -> score -> tables + figures
include: "workflow/rules/analyses.smk"  # swap-noise robustness
include: "workflow/rules/effects.smk"  # the papers' claimed effects against ours (findings table)
include: "workflow/rules/ledger.smk"  # the run ledger: ledger runs restored, new runs recorded


lock.claim(R)  # another run writing this experiment's folder is refused when jobs start
if workflow.is_main_process:
    lock.note_active_runs()  # before Snakemake calls that run's jobs 'incomplete'


onstart:
    lock.take_claimed()  # see src/wordorder/lock.py (main process only; not with -n)
    warm.for_local_jobs(workflow.local_exec, config["warm_jobs"])  # src/wordorder/warm.py


rule all:
    default_target: True
    input:
        EX.all_targets(),


onsuccess:
    print(f"\nResults table: {P.BLEU_MD} (CSV beside it); figures in {R}/figures/; logs in {L}/")
