#!/usr/bin/env bash
# Run HERE (the CPU machine), after the long-sentence pilot's data and preorders exist
# (configs/effects_long_pilot.yaml): packs what its ja-en trainings read into
# .gpu/pilot_long.tar.xz and writes their exact `wordorder train` commands, as Snakemake renders
# them with the GPU overlay of the experiment (benchmarks/gpu/effects_long.yaml: bf16, CUDA
# graphs), into .gpu/pilot_long.cmds, one per line. benchmarks/gpu/check.sh's `pilot_long` phase
# runs them all at once on the GPU (issue 34: the baseline's seed spread and plateau, and the gold
# oracle's gain, under the recipe the experiment will run with).
#
#   PILOT_BASELINE_SEEDS="1 2 3 4 5 6" PILOT_GOLD_SEEDS="1 2" bash benchmarks/gpu/pilot_long_prepare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${PILOT_BASELINE_SEEDS:-1 2 3 4 5 6}
gold=${PILOT_GOLD_SEEDS:-1 2}
R=results/effects_long_pilot
overlay=$(mktemp --suffix .yaml)
trap 'rm -f "$overlay" "$overlay.log"' EXIT
printf 'seeds: [%s]\nseeds_by_variant: {kawara2021_relative_gold: [%s]}\n' \
  "$(echo $base | tr ' ' ,)" "$(echo $gold | tr ' ' ,)" > "$overlay"
targets=()
for s in $base; do targets+=("$R/models/ja-en/kawara2021_baseline/seed$s/best.pt"); done
for s in $gold; do targets+=("$R/models/ja-en/kawara2021_relative_gold/seed$s/best.pt"); done
mkdir -p .gpu
# --forcerun train: the commands of runs begun on the CPU too (they start afresh there: no state
# travels). Each line: make the output, log and state folders, then exec the trainer (SIGTERM reaches it).
# (Targets first: --forcerun, --allowed-rules and --configfile each take every word after them.)
PATH="$PWD/.venv/bin:$PATH" snakemake "${targets[@]}" -n -p --rerun-incomplete --forcerun train \
  --allowed-rules train --configfile configs/effects_long_pilot.yaml \
  benchmarks/gpu/effects_long.yaml "$overlay" > "$overlay.log" 2>&1 ||
  { tail -n 20 "$overlay.log" >&2; exit 1; }
python3 -c '
import re, sys
for line in sys.stdin:
    if not line.startswith("Shell command: "):
        continue
    cmd = line[len("Shell command: "):].strip()
    out = re.search(r" --output (\S+)", cmd).group(1)
    log = re.search(r" > (\S+) 2>&1$", cmd).group(1)
    state = re.search(r" --state (\S+)", cmd).group(1)
    print(f"mkdir -p $(dirname {out}) $(dirname {log}) $(dirname {state}) && exec {cmd}")
' < "$overlay.log" > .gpu/pilot_long.cmds.tmp
n=$(wc -l < .gpu/pilot_long.cmds.tmp)
[ "$n" -eq $(( $(echo $base | wc -w) + $(echo $gold | wc -w) )) ] ||
  { echo "expected one command a run, got $n" >&2; exit 1; }
grep -q '"cuda_graphs": "auto"' .gpu/pilot_long.cmds.tmp ||
  { echo "the GPU overlay did not reach the commands" >&2; exit 1; }
mv .gpu/pilot_long.cmds.tmp .gpu/pilot_long.cmds
D=$R/data/ja-en G=$R/preorder/ja-en/gold
tar -cJf .gpu/pilot_long.tar.xz.tmp $D/spm.model $D/train.bpe.ja $D/train.bpe.en $D/dev.bpe.ja \
  $D/dev.tok.en $G/train.positions.ja $G/dev.positions.ja
mv .gpu/pilot_long.tar.xz.tmp .gpu/pilot_long.tar.xz
echo "$n commands in .gpu/pilot_long.cmds; $(du -h .gpu/pilot_long.tar.xz | cut -f1) of inputs"
du -sh .gpu | awk '{print "carried with the tree: " $1 " (the device tool carries at most 64 MiB)"}'
