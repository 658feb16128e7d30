#!/usr/bin/env bash
# Run HERE (the CPU machine), after benchmarks/gpu/prepare.sh, before a GPU session that is to
# train the effects experiment (configs/effects.yaml, issue 20) there: runs every job upstream of
# the trainings (tokenizing, GiNZA parses, eflomal alignment, BTG and RvNN preorders, BPE, syntax
# features; the GPU image has neither GiNZA nor eflomal) and packs their outputs, with their
# modification times, into .gpu/effects_inputs.tar.gz. benchmarks/gpu/check.sh's `effects`
# phase unpacks it there and trains, decodes and scores with benchmarks/gpu/effects.yaml.
#
#   bash benchmarks/gpu/effects_prepare.sh [RESULTS_ROOT]
#
# RESULTS_ROOT: a checkout whose results/effects already holds those outputs (e.g. a worktree
# where the experiment runs); default this checkout, where they are made first.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(realpath "${1:-.}")
[ -d .gpu/whl ] || { echo "no .gpu/whl: run benchmarks/gpu/prepare.sh first" >&2; exit 1; }
if [ "$root" = "$PWD" ]; then
  PATH="$PWD/.venv/bin:$PATH" snakemake --cores all --configfile configs/effects.yaml \
    --omit-from train --rerun-triggers mtime
fi
# What the trainings and everything after them read (check.sh runs only those rules there, with
# --allowed-rules, so the rest are plain files): the data, preorders and syntax features, and
# the reports made upstream. Not the preorderers' models, the parses, the raw and tokenized
# corpora, nor anything a run that went on here made from its models (it would be stale there).
cd "$root"
tar -czf "$OLDPWD/.gpu/effects_inputs.tar.gz.tmp" \
  --exclude='results/effects/preorder/*/model.npz' --exclude='results/effects/preorder/*/model.pt' \
  --exclude='results/effects/data/*/parse' --exclude='results/effects/data/*/*.conllu' \
  --exclude='results/effects/data/*/raw' --exclude='results/effects/data/*/tok' \
  results/effects/data results/effects/preorder results/effects/syntax \
  results/effects/tables/preorder_quality_* results/effects/figures/preorder_* \
  results/effects/figures/syntax_*
cd "$OLDPWD"
mv .gpu/effects_inputs.tar.gz.tmp .gpu/effects_inputs.tar.gz
du -sh .gpu/effects_inputs.tar.gz
du -sh .gpu | awk '{print "carried with the tree: " $1 " (the device tool carries at most 64 MiB)"}'
