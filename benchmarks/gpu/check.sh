#!/usr/bin/env bash
# Run ON THE GPU MACHINE (the device tool), from the repository root, with .gpu carried (made
# here by benchmarks/gpu/prepare.sh):
#
#   bash benchmarks/gpu/check.sh [setup] [tests] [bench] [dag]    (default: all four)
#
#   setup  install the carried wheels into /tmp/site, a `wordorder` command, ../shared/data
#   tests  tests/system/test_cuda.py: every system's loss and gradients on CUDA = CPU, AMP
#          (bf16, fp16 + GradScaler), four systems learn SVO->SOV there, checkpoints portable
#   bench  bench_train.py (base preset: fp32 and bf16 AMP, MFU against the measured bf16 matmul
#          peak and the data sheet's) and bench_variants.py (base size, bf16 AMP, six systems)
#   dag    one Transformer-base training + beam decoding through Snakemake (base.yaml), then
#          its BLEU table
#
# Every phase runs under `timeout`, logs to $OUT/<phase>.log (the device tool returns $OUT)
# and prints its wall time; a failed phase does not stop the next. Setup runs in every call
# (each call is a new shell; installing is skipped when a warm machine already has it).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/site:$PWD/src" PATH="/tmp/bin:/tmp/site/bin:$PATH"
phases=${*:-tests bench dag}

run() {  # run NAME SECONDS COMMAND...: time-limited, logged, never fatal
  local name=$1 limit=$2 t0=$SECONDS rc
  shift 2
  echo "== $name (limit ${limit}s)"
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  echo "   rc $rc, $((SECONDS - t0)) s; last lines of $OUT/$name.log:"
  tail -n 25 "$OUT/$name.log" | grep -v '^\s*$' | sed 's/^/   | /'
  return 0
}

setup() {
  if [ ! -e /tmp/site/.installed ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .gpu/whl/*.whl && touch /tmp/site/.installed
  fi
  mkdir -p /tmp/bin
  printf '#!/usr/bin/env python3\nfrom wordorder.cli import main\nmain()\n' > /tmp/bin/wordorder
  chmod +x /tmp/bin/wordorder
  if [ ! -e ../shared/data ]; then mkdir -p ../shared && ln -s "$PWD/.gpu/data" ../shared/data; fi
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  python3 - <<'PY'
import torch, snakemake, pandas, sacrebleu, wordorder
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}, "
      f"bf16 {torch.cuda.is_bf16_supported()}; snakemake {snakemake.__version__}, "
      f"pandas {pandas.__version__}, sacrebleu {sacrebleu.__version__}")
PY
}

tests() {
  run tests 240 python3 -m pytest -q -p no:cacheprovider -o addopts= --durations=8 \
    tests/system/test_cuda.py -rs
}

bench() {
  run bench_train 150 python3 benchmarks/bench_train.py --preset base --cpu-steps 0 \
    --cuda-steps 100 --batch-tokens 8192
  run bench_variants 300 python3 benchmarks/bench_variants.py --device cuda --amp \
    --preset base --target-tokens 8192 --steps 160 --timed-from 40 --decode-sentences 500 \
    --variants transformer_small,chen2019_both_res,chen2019_relative_pe,chen2020_fusing_diverse,kawara2021_relative_gold,kawara2021_absolute_gold \
    --work /tmp/bench_variants --json "$OUT/bench_variants.json"
}

dag() {
  run dag 420 snakemake --cores all --configfile benchmarks/gpu/base.yaml
  cp results/gpu_base/tables/bleu.md logs/gpu_base/train/*.log "$OUT/" 2>/dev/null
  cat results/gpu_base/tables/bleu.md 2>/dev/null
  grep -h "tok_s\|stop" results/gpu_base/models/*/*/*/metrics.jsonl 2>/dev/null | tail -n 3
}

echo "== setup"
setup 2>&1 | tee "$OUT/setup.log"
for p in $phases; do
  case $p in
    setup) ;;
    tests | bench | dag) $p ;;
    *) echo "unknown phase $p (setup, tests, bench, dag)" >&2 ;;
  esac
done
