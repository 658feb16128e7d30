# The five papers at full scale in one DAG (configs/full/*.yaml): each is a module of the main
# workflow with its own config and results/<paper>_full/, and Snakemake schedules all jobs
# together (downloads are shared through results/downloads):
#   snakemake -s workflow/papers.smk --workflow-profile workflow/profiles/slurm
# Rules are renamed <paper>_<rule> (e.g. --until kawara2021_train). One paper alone:
#   snakemake --configfile configs/full/<paper>.yaml
# read_yaml: strict, a repeated key is an error (Snakemake's loader would keep the last).
from wordorder import lock, warm
from wordorder.config import read_yaml


module chen2018:
    snakefile:
        "../Snakefile"
    config:
        read_yaml("configs/full/chen2018.yaml")


use rule * from chen2018 as chen2018_*


module chen2019:
    snakefile:
        "../Snakefile"
    config:
        read_yaml("configs/full/chen2019.yaml")


use rule * from chen2019 as chen2019_*


module chen2020:
    snakefile:
        "../Snakefile"
    config:
        read_yaml("configs/full/chen2020.yaml")


use rule * from chen2020 as chen2020_*


module kawara2021:
    snakefile:
        "../Snakefile"
    config:
        read_yaml("configs/full/kawara2021.yaml")


use rule * from kawara2021 as kawara2021_*


module zhang2018:
    snakefile:
        "../Snakefile"
    config:
        read_yaml("configs/full/zhang2018.yaml")


use rule * from zhang2018 as zhang2018_*


# Snakemake ignores the modules' onstart: each module claimed its results folder when parsed.
onstart:
    lock.take_claimed()
    # five configs, no one warm_jobs: WORDORDER_WARM=0 turns warm jobs off
    warm.for_local_jobs(workflow.local_exec, True)


rule all:
    default_target: True
    input:
        rules.chen2018_all.input,
        rules.chen2019_all.input,
        rules.chen2020_all.input,
        rules.kawara2021_all.input,
        rules.zhang2018_all.input,
