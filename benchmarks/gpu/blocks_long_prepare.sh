#!/usr/bin/env bash
# Run HERE (the CPU machine): the inputs of the effects_long GPU pack (issue 44;
# benchmarks/gpu/effects_long_blocks.yaml), for benchmarks/gpu/check.sh's `blocks_long` phase.
# Builds everything upstream of the trainings (GiNZA parses, eflomal, BTG and RvNN preorders,
# BPE; hours on 2 cores), then packs the files the pack's runs read, as their ledger records
# will name them, into .gpu/blocks_long.tar.xz, the runs' ledger targets into
# .gpu/blocks_long.targets and this commit into .gpu/blocks_long.commit (the GPU machine's copy
# of the tree has no git: the ledger's provenance takes it from there).
#
#   bash benchmarks/gpu/blocks_long_prepare.sh
#   BLOCKS_OVERLAY=benchmarks/gpu/effects_long_blocks_16.yaml bash benchmarks/gpu/blocks_long_prepare.sh
#
# BLOCKS_OVERLAY: one more config read last (the second job's seeds); the configs go to
# .gpu/blocks_long.configs, which check.sh reads. Runs already in the ledger are not packed.
set -euo pipefail
cd "$(dirname "$0")/../.."
configs=(configs/effects_long.yaml benchmarks/gpu/effects_long.yaml
  benchmarks/gpu/effects_long_blocks.yaml ${BLOCKS_OVERLAY:+"$BLOCKS_OVERLAY"})
export PATH="$PWD/.venv/bin:$PATH"
mkdir -p .gpu
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# the runs the pack records: every ledger target of the config with the overlays
python3 - "${configs[@]}" > .gpu/blocks_long.targets.tmp <<'PY'
import pathlib
import sys
import yaml
config = {}
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        part = yaml.safe_load(f)
    for k, v in part.items():  # Snakemake's merge: nested mappings merged, the rest replaced
        config[k] = {**config[k], **v} if isinstance(v, dict) and isinstance(config.get(k), dict) else v
by_variant = config.get("seeds_by_variant") or {}
ledger = pathlib.Path(config["ledger"], "runs")
for pair in config["pairs"]:
    for v in config["variants"]:
        for s in by_variant.get(v, config["seeds"]):
            if not (ledger / f"{pair}.{v}.seed{s}").is_dir():  # recorded: never trained again
                print(f"results/{config['experiment']}/ledger/{pair}.{v}.seed{s}.json")
PY
mapfile -t targets < .gpu/blocks_long.targets.tmp
[ ${#targets[@]} -gt 0 ] || { echo "every run of the pack is in the ledger already" >&2; exit 1; }
# 1. everything upstream of the trainings (targets first: --configfile takes every word after it)
snakemake "${targets[@]}" --cores 2 --omit-from train translate ledger_add \
  --configfile "${configs[@]}" > "$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }
# 2. the files the runs read: the inputs each ledger_add job would digest (its --spec)
snakemake "${targets[@]}" -n -p --allowed-rules train translate ledger_add \
  --configfile "${configs[@]}" > "$log" 2>&1 || true
python3 - "$log" > .gpu/blocks_long.files <<'PY'
import json, re, shlex, sys
files = set()
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("Shell command: ") or " ledger-add " in line:
        words = shlex.split(line.split("Shell command: ")[-1].split(" > ")[0])
        if "--spec" in words:
            spec = json.loads(words[words.index("--spec") + 1])
            files.update(spec["inputs"].values())
if not files:
    sys.exit("no ledger-add command found in the dry run")
print("\n".join(sorted(files)))
PY
tar -cJf .gpu/blocks_long.tar.xz.tmp -T .gpu/blocks_long.files
mv .gpu/blocks_long.tar.xz.tmp .gpu/blocks_long.tar.xz
mv .gpu/blocks_long.targets.tmp .gpu/blocks_long.targets
printf '%s\n' "${configs[@]}" > .gpu/blocks_long.configs
git rev-parse HEAD > .gpu/blocks_long.commit
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
  echo "WARNING: the tree has uncommitted changes; the runs will name $(git rev-parse --short HEAD)" >&2
echo "${#targets[@]} runs, $(wc -l < .gpu/blocks_long.files) input files, $(du -h .gpu/blocks_long.tar.xz | cut -f1)"
du -sh .gpu | awk '{print "carried with the tree: " $1 " (the device tool carries at most 64 MiB)"}'
