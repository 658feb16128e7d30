#!/usr/bin/env bash
# Run HERE (the CPU machine) before a GPU session: fills .gpu/ (git-ignored) with what the GPU
# machine lacks and cannot download (it has no network): the wheels of the packages wordorder
# needs beyond that machine's image (Python 3.12, torch, numpy, sentencepiece, numba, ...),
# at the versions of this checkout's .venv, and the corpora under ../shared/data that the
# checks read. The device tool then carries .gpu (carry: [".gpu"]) and benchmarks/gpu/check.sh
# uses it there. Needs `make install` first (the versions come from .venv).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
[ -x "$py" ] || { echo "no .venv: run 'make install' first" >&2; exit 1; }

# Not in the GPU image (its package list: the device tool's KINDS.md), with their own needs.
# pandas and sacrebleu are there, at other versions: ours, so that tables and scores are the
# ones CI tests.
need="snakemake snakemake-interface-common snakemake-interface-executor-plugins
snakemake-interface-logger-plugins snakemake-interface-report-plugins
snakemake-interface-scheduler-plugins snakemake-interface-storage-plugins
annotated-types argparse-dataclass conda-inject configargparse connection-pool docutils dpath
fastjsonschema gitdb gitpython greenlet humanfriendly immutables jsonschema
jsonschema-specifications jupyter-core nbformat platformdirs pulp pydantic pydantic-core
referencing rpds-py smart-open smmap sqlalchemy sqlmodel tenacity throttler traitlets
typing-inspection yte sacremoses pandas sacrebleu"
specs=$($py - $need <<'PY'
import importlib.metadata as md, sys
print(" ".join(f"{n}=={md.version(n)}" for n in sys.argv[1:]))
PY
)
rm -rf .gpu/whl.tmp && mkdir -p .gpu/whl.tmp
# connection-pool publishes no wheel: build its (pure-Python) one here
pure=$(tr ' ' '\n' <<<"$specs" | grep -i '^connection-pool==')
$py -m pip wheel -q --no-deps -w .gpu/whl.tmp "$pure"
$py -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
  -d .gpu/whl.tmp $(tr ' ' '\n' <<<"$specs" | grep -vi '^connection-pool==')
rm -rf .gpu/whl && mv .gpu/whl.tmp .gpu/whl

rm -rf .gpu/data && mkdir -p .gpu/data
# word-alignment-gold: the effects experiment's AER (the `effects` phase). Modification times kept
# (-p): older than the outputs made from them, so Snakemake sees those outputs as up to date.
for d in multi30k_task1_en-de-cs ja-en_small_parallel_enja word-alignment-gold_awesome-align; do
  cp -rp "../shared/data/$d" .gpu/data/ && chmod -R u+w ".gpu/data/$d"
done
du -sh .gpu/whl .gpu/data
echo "ready: carry .gpu and run benchmarks/gpu/check.sh on the GPU machine"
