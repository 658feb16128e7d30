#!/usr/bin/env bash
# Run ON THE GPU MACHINE (the device tool), from the repository root, with .gpu carried (made
# here by benchmarks/gpu/prepare.sh):
#
#   bash benchmarks/gpu/check.sh [tests] [train] [dag] [variants] [compile]   (default: all, in order)
#
# A phase written A+B runs A and B at once (e.g. `tests+pilot_long`: correctness tests beside
# trainings whose speed is not being measured); the others run one after another.
#
#   tests     tests/system/test_cuda.py: every system's loss and gradients on CUDA = CPU, AMP
#             (bf16, fp16 + GradScaler), three systems learn SVO->SOV there, checkpoints portable
#   train     bench_train.py, base preset, bf16 AMP with 8,192- and 25,000-token batches, eager and
#             unstacked (a leaf per parameter, as before train/stacked.py; TRAIN_MODES) and
#             with train.cuda_graphs: MFU against the measured matmul peak and the data sheet's,
#             the share of the time the GPU is busy and the host's aten calls per update
#             (profiled); first the same with the code of .gpu/before (git archive of an earlier
#             commit: `prepare.sh` with BEFORE=<commit>) when it is packed, for before/after
#             in one call
#   dag       one Transformer-base training + beam decoding through Snakemake (base.yaml), then
#             its BLEU table
#   variants  bench_variants.py at base size with bf16 AMP: six systems' training and decoding
#   compile   bench_train.py with train.compile (bf16, 8k batches; the compile time is printed)
#   effects   the effects experiment's 51 trainings, decodings and tables (issue 20), 8 at a time
#             with benchmarks/gpu/effects.yaml, from the inputs benchmarks/gpu/effects_prepare.sh
#             packed; not in the default list (it needs that pack and most of a call:
#             EFFECTS_LIMIT seconds, 520 by default; a second call goes on where it stopped)
#   effects_part  the runs named in .gpu/effects_targets on the CPU config's own schedule
#             (benchmarks/gpu/effects_same.yaml), EFFECTS_JOBS (12) at a time: trains, decodes and
#             measures attention AER; brings back logs, translations and AER for the CPU machine
#             to score and tabulate with the runs it trained itself (H100, 2026-11-26: 14 at a
#             time, 29 of 35 runs trained and decoded in two calls of 530 + 235 s)
#   pilot_long  the long-sentence pilot's trainings (issue 34), all at once with the experiment's
#             GPU recipe, from what benchmarks/gpu/pilot_long_prepare.sh packed; PILOT_LIMIT (200)
#             seconds, then SIGTERM; each run's metrics log (dev BLEU and perplexity every 300
#             updates) and log back in $OUT/pilot_long.tar.gz (H200, 2026-11-27: 8 at once, 2,700
#             updates each in 190 s)
#   blocks_long  the GPU pack of configs/effects_long.yaml's block design (issue 44), packed by
#             benchmarks/gpu/blocks_long_prepare.sh (its configs in .gpu/blocks_long.configs):
#             the runs not yet in ledger/effects_long_gpu trained, decoded and recorded there,
#             BLOCKS_JOBS (12) at a time, BLOCKS_LIMIT (480) s; the ledger back in
#             $OUT/blocks_long_ledger.tar.gz (H200, 2026-11-29: the first job's 27 runs, 16 at a
#             time, in 7 min 13 s; the second job: BLOCKS_OVERLAY=
#             benchmarks/gpu/effects_long_blocks_16.yaml for the prepare script, 24 runs). Run
#             `tests` alone first: beside the pack's 16 trainings it ran out of its limits
#   host      bench_trainer_host.py on the GPU: the real trainer (base, bf16 AMP, 8k tokens) with
#             the host's time between updates and a profile of its top 30 functions: the peers
#             run (2026-11-27) saw 177 ms an update in the trainer against 52-70 ms in bench_train
#   concurrent  bench_concurrent.py: 1 and 12 mini trainings at once (the effects experiment's
#             case), eager and with cuda_graphs, and the code of .gpu/before eagerly (issue 36);
#             CONCURRENT_N (1,12), CONCURRENT_MODES (eager,graphs), CONCURRENT_LIMIT (100 s)
#   peers     eole 0.6.4 against wordorder on this GPU (issue 36 item 4), from what
#             `benchmarks/gpu/prepare.sh peers` packed (eole's wheels, installed into
#             /tmp/eole_site, eole's own PYTHONPATH; data and the two decoding models): training
#             Transformer-base in bf16 with 8,192- and 25,000-token batches (bench_peers.py,
#             fresh processes, 20 warm-up + 60 timed updates each, MFU against the bf16 torch.mm
#             peak measured in the run), then beam-4 decoding of 500 Tanaka sentences with
#             models trained alike on the CPU machine, at equal BLEU (bench_peers_decode.py, 2
#             rounds, batched by sentences and by tokens); a summary table at the end, JSON,
#             logs and the runs' own logs in $OUT/peers.tar.gz. Not in the default list. About
#             160 s expected, at most PEERS_TRAIN_LIMIT (110) + PEERS_DECODE_LIMIT (65) s plus
#             ~10 s of set-up; PEERS_WORDORDER_OPTS="cuda_graphs=true ..." passes train options
#             to wordorder's trainer (--wordorder-train-opt each); PEERS_PARTS (train decode)
#             picks the parts, PEERS_WARMUP (20) and PEERS_STEPS (60) the updates;
#             PEERS_DECODE_GRAPHS=1: wordorder decodes with decode.cuda_graphs (static shapes,
#             each step replayed from a CUDA graph; never run on a GPU before 2026-11-27 evening)
#
# The order is the order of importance. On an H100 (2026-11-26): tests 61 s, train (then with
# torch.compile) stopped at its 200 s limit while compiling, dag 165 s, variants 87 s; setup
# about 14 s and a fresh machine's start about 30 s (a call's time less its phases'). On an H200
# (2026-11-27): tests 52 s alone, `peers` training part 118 s, `compile` still compiling at 200 s
# (before the is_causal graph-break fix), `tests+pilot_long` 198 s. A session with 15 device minutes can run
# `tests train` in one call (at most 7.8 minutes by the limits), `dag variants` in a second,
# and `compile` if time is left. Setup (the carried wheels
# into /tmp/site, a `wordorder` command, ../shared/data) runs in every call, each a new shell;
# installing is skipped when a warm machine already has it. Every phase runs under `timeout`,
# logs to $OUT/<phase>.log (the device tool returns $OUT) and prints its wall time; a failed
# phase does not stop the next.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/site:$PWD/src" PATH="/tmp/bin:/tmp/site/bin:$PATH"
phases=${*:-tests train dag variants compile}

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

tests() {  # two processes: a device-side assert spoils the CUDA context for the rest of its
  # process, so the tests that replay CUDA graphs run after the others, in their own
  # (every test's outcome in $OUT/tests*.xml, to read the route table's rows from)
  run tests 150 python3 -m pytest -q -p no:cacheprovider -o addopts= --durations=8 -rs \
    --junitxml "$OUT/tests.xml" -k "not with_cuda_graphs and not graphed_beam" \
    tests/system/test_cuda.py
  run tests_graphs 120 python3 -m pytest -q -p no:cacheprovider -o addopts= --durations=8 -rs \
    --junitxml "$OUT/tests_graphs.xml" -k "with_cuda_graphs or graphed_beam" \
    tests/system/test_cuda.py
}

train() {  # issue 36: before (the code of .gpu/before, if packed) and after, in one call
  if [ -d .gpu/before/src ]; then
    run bench_train_before 80 env PYTHONPATH="/tmp/site:$PWD/.gpu/before/src" \
      python3 .gpu/before/benchmarks/bench_train.py --preset base --cpu-steps 0 \
      --cuda-steps 60 --batch-tokens 8192 --amp-batch-tokens 25000
  fi
  run bench_train 210 python3 benchmarks/bench_train.py --preset base --cpu-steps 0 \
    --cuda-fp32 0 --cuda-steps 60 --amp-batch-tokens 8192,25000 \
    --modes "${TRAIN_MODES:-eager,unstacked,graphs}" --json "$OUT/bench_train.json"
}

compile() {  # torch.compile did not finish within 200 s in an earlier session
  run bench_compile "${COMPILE_LIMIT:-300}" python3 benchmarks/bench_train.py --preset base \
    --cpu-steps 0 --cuda-fp32 0 --cuda-steps 60 --amp-batch-tokens 8192 \
    --modes "${COMPILE_MODES:-compile}" --json "$OUT/bench_compile.json"
}

dag() {
  run dag 270 snakemake --cores all --configfile benchmarks/gpu/base.yaml
  cp results/gpu_base/tables/bleu.md logs/gpu_base/train/*.log "$OUT/" 2>/dev/null
  cat results/gpu_base/tables/bleu.md 2>/dev/null
  tail -n 2 results/gpu_base/models/*/*/*/metrics.jsonl 2>/dev/null
}

variants() {
  run bench_variants 240 python3 benchmarks/bench_variants.py --device cuda --amp \
    --preset base --target-tokens 8192 --steps 120 --timed-from 30 --decode-sentences 500 \
    --variants transformer_small,chen2019_both_res,chen2019_relative_pe,chen2020_fusing_diverse,kawara2021_relative_gold,kawara2021_absolute_gold \
    --work /tmp/bench_variants --json "$OUT/bench_variants.json"
}

host() {  # issue 36: where the trainer's own time goes between updates (and in them) on the GPU
  run trainer_host 90 python3 benchmarks/bench_trainer_host.py \
    --data .gpu/data/ja-en_small_parallel_enja \
    --device cuda --preset base --batch-tokens 8192 --steps 80 --profile 30
}

concurrent() {  # issue 36 item 5: N small trainings at once, before (if packed) and after
  if [ -d .gpu/before/src ]; then
    run concurrent_before 60 python3 benchmarks/bench_concurrent.py --code .gpu/before \
      --n 1,12 --modes eager --steps 150
  fi
  # CONCURRENT_N=1,2,4,8,16 CONCURRENT_MODES=graphs: how many trainings a GPU of this size
  # should run at once (item 5's question; 1 and 12 only so far)
  run concurrent "${CONCURRENT_LIMIT:-100}" python3 benchmarks/bench_concurrent.py \
    --n "${CONCURRENT_N:-1,12}" --modes "${CONCURRENT_MODES:-eager,graphs}" \
    --steps 150 --json "$OUT/concurrent.json"
}

pilot_long() {  # issue 34: the long-sentence pilot's trainings (configs/effects_long_pilot.yaml)
  # with the experiment's GPU recipe (benchmarks/gpu/effects_long.yaml: bf16, CUDA graphs), all at
  # once; inputs and the exact commands from benchmarks/gpu/pilot_long_prepare.sh. Each training
  # gets PILOT_LIMIT seconds, then SIGTERM (the trainer saves its state and stops); its dev curve
  # (metrics.jsonl: dev BLEU and perplexity every 300 updates) and log come back.
  if [ ! -f .gpu/pilot_long.tar.xz ] || [ ! -f .gpu/pilot_long.cmds ]; then
    echo "== pilot_long: no .gpu/pilot_long.{tar.xz,cmds} (benchmarks/gpu/pilot_long_prepare.sh)"
    return 0
  fi
  local limit=${PILOT_LIMIT:-200} t0=$SECONDS cmd
  [ -d results/effects_long_pilot/data ] || tar -xJf .gpu/pilot_long.tar.xz
  echo "== pilot_long (limit ${limit}s): $(wc -l < .gpu/pilot_long.cmds) trainings at once"
  while IFS= read -r cmd; do
    timeout -k 30 -s TERM "$limit" bash -c "$cmd" &
  done < .gpu/pilot_long.cmds
  wait
  echo "   pilot_long: $((SECONDS - t0)) s"
  # A stopped run keeps its metrics log in its state (metrics.jsonl is removed, so Snakemake
  # cannot take it for done); a finished run has metrics.jsonl. Either, as one file a run.
  python3 - <<'PY'
import glob, pathlib, torch
out = pathlib.Path("pilot_metrics")
out.mkdir(exist_ok=True)
for st in sorted(glob.glob("results/effects_long_pilot/resume/*/*/seed*/state.pt")):
    name = ".".join(st.split("/")[-4:-1])
    lines = torch.load(st, map_location="cpu", weights_only=True)["progress"]["metrics"]
    (out / f"{name}.jsonl").write_text("".join(line + "\n" for line in lines))
for m in sorted(glob.glob("results/effects_long_pilot/models/*/*/seed*/metrics.jsonl")):
    (out / f"{'.'.join(m.split('/')[-4:-1])}.jsonl").write_text(pathlib.Path(m).read_text())
for f in sorted(out.glob("*.jsonl")):
    dev = [line for line in f.read_text().splitlines() if "dev_bleu" in line]
    print(f"   {f.stem}: {dev[-1] if dev else 'no evaluation'}")
PY
  tar -czf "$OUT/pilot_long.tar.gz" pilot_metrics logs/effects_long_pilot/train 2>/dev/null
}

blocks_long() {  # issue 44: the GPU pack of effects_long's block design, recorded in its ledger
  # (benchmarks/gpu/effects_long_blocks.yaml); inputs, targets and commit packed by
  # benchmarks/gpu/blocks_long_prepare.sh. Trains, decodes and records each run
  # (ledger/effects_long_gpu); the ledger comes back in $OUT/blocks_long_ledger.tar.gz, to be
  # unpacked into the tree and committed. BLOCKS_LIMIT seconds (480); runs not recorded by then
  # go to the next call (a recorded run is never trained again: the ledger holds it).
  local f
  for f in tar.xz targets configs commit; do
    [ -f ".gpu/blocks_long.$f" ] ||
      { echo "== blocks_long: no .gpu/blocks_long.$f (benchmarks/gpu/blocks_long_prepare.sh)"; return 0; }
  done
  tar -xJf .gpu/blocks_long.tar.xz
  WORDORDER_COMMIT=$(cat .gpu/blocks_long.commit)
  export WORDORDER_COMMIT  # the ledger's provenance: this copy of the tree has no git
  # the targets first: --rerun-triggers and --configfile take every word after them
  run blocks_long "${BLOCKS_LIMIT:-480}" \
    snakemake $(cat .gpu/blocks_long.targets) --cores 16 --resources gpu="${BLOCKS_JOBS:-12}" \
    --allowed-rules train translate ledger_add ledger_input --keep-going --rerun-incomplete \
    --rerun-triggers mtime --configfile $(cat .gpu/blocks_long.configs)
  tar -czf "$OUT/blocks_long_ledger.tar.gz" ledger/effects_long_gpu logs/effects_long 2>/dev/null
  ls ledger/effects_long_gpu/runs 2>/dev/null | wc -l | sed 's/$/ runs in the ledger/'
}

unpack_effects() {  # the inputs benchmarks/gpu/effects_prepare.sh packed, once per machine
  if [ ! -f .gpu/effects_inputs.tar.gz ]; then
    echo "== $1: no .gpu/effects_inputs.tar.gz (benchmarks/gpu/effects_prepare.sh makes it)"
    return 1
  fi
  [ -d results/effects/data ] || tar -xzf .gpu/effects_inputs.tar.gz
}

effects() {  # the effects experiment (issue 20) trained here: benchmarks/gpu/effects.yaml
  unpack_effects effects || return 0
  # Only the trainings and what follows them run here; everything upstream was made on the
  # CPU machine (no GiNZA or eflomal on this image) and is read as plain files.
  local rules="train translate score attention_aer aer_table convergence findings
    length_analysis systems cross_paper report readme_section all"
  run effects "${EFFECTS_LIMIT:-520}" snakemake --cores 16 --resources gpu=8 \
    --configfile configs/effects.yaml benchmarks/gpu/effects.yaml --allowed-rules $rules \
    --keep-going --rerun-incomplete --rerun-triggers mtime
  # Back through $OUT: tables, figures, scores, translations, training curves and logs (no models)
  tar -czf "$OUT/effects_results.tar.gz" --exclude='*.pt' --exclude=results/effects/data \
    --exclude=results/effects/preorder --exclude=results/effects/resume results/effects \
    logs/effects 2>/dev/null
  cat results/effects/tables/findings.md 2>/dev/null
  ls results/effects/models/*/*/*/best.pt 2>/dev/null | wc -l | sed 's/$/ trainings done/'
}

effects_part() {  # some of its runs, on the CPU config's own schedule: effects_same.yaml
  unpack_effects effects_part || return 0
  [ -f .gpu/effects_targets ] || { echo "== effects_part: no .gpu/effects_targets"; return 0; }
  run effects_part "${EFFECTS_LIMIT:-520}" snakemake --cores 16 \
    --resources gpu="${EFFECTS_JOBS:-12}" --configfile configs/effects.yaml \
    benchmarks/gpu/effects_same.yaml --allowed-rules train translate attention_aer \
    --keep-going --rerun-incomplete --rerun-triggers mtime -- $(cat .gpu/effects_targets)
  # Back: training logs (with the parameter count), translations, AER, benchmarks, job logs
  tar -czf "$OUT/effects_part.tar.gz" results/effects/models/*/*/*/metrics.jsonl \
    results/effects/translations results/effects/aer results/effects/benchmarks/train \
    results/effects/benchmarks/translate logs/effects 2>/dev/null
  ls results/effects/models/*/*/*/best.pt 2>/dev/null | wc -l | sed 's/$/ trainings done/'
  ls results/effects/translations/*/*/*/*.hyp 2>/dev/null | wc -l | sed 's/$/ test sets decoded/'
}

peers() {  # eole 0.6.4 against wordorder (issue 36 item 4): packed by prepare.sh peers
  # PEERS_REHEARSAL=1: the same on a CPU at toy sizes, to try this phase without a GPU (with
  # PEERS_EOLE_PYTHON, a python with torch, and PEERS_EOLE_SITE, eole's wheels installed for it)
  local py=${PEERS_EOLE_PYTHON:-python3} site=${PEERS_EOLE_SITE:-/tmp/eole_site}
  local work=/tmp/peers_work t0=$SECONDS
  local device=cuda preset=base sizes=8192,25000 test=500
  local steps="--warmup-steps ${PEERS_WARMUP:-20} --steps ${PEERS_STEPS:-60}"
  local rounds=2 amp=--amp threads=4
  if [ -n "${PEERS_REHEARSAL:-}" ]; then  # fp32: a CPU without native bf16 emulates it, slowly
    device=cpu preset=tiny sizes=1024,2048 steps="--warmup-steps 5 --steps 10" test=50 rounds=1
    amp="" threads=1
  fi
  if [ ! -f .gpu/peers.tar.xz ] || [ ! -f .gpu/peers.args ] || [ ! -d .gpu/eole_whl ]; then
    echo "== peers: no .gpu/eole_whl, .gpu/peers.tar.xz, .gpu/peers.args" \
      "(benchmarks/gpu/prepare.sh peers makes them)"
    return 0
  fi
  # eole's wheels apart from wordorder's /tmp/site (pydantic's four from .gpu/whl), its own
  # PYTHONPATH in its processes (bench_peers*.py --eole-pythonpath)
  if [ ! -e "$site/.installed" ]; then
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target "$site" .gpu/eole_whl/*.whl \
      .gpu/whl/{pydantic,pydantic_core,annotated_types,typing_inspection}-*.whl &&
      touch "$site/.installed"
  fi
  if [ ! -e $work/.unpacked ]; then
    rm -rf $work && mkdir -p $work && python3 -c "import sys, tarfile
tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='data')" .gpu/peers.tar.xz $work &&
      touch $work/.unpacked
  fi
  echo "== peers: eole installed, data and models unpacked ($((SECONDS - t0)) s)"
  local train_args decode_args opts="" o
  train_args=$(sed -n 's/^train=//p' .gpu/peers.args)
  decode_args=$(sed -n 's/^decode=//p' .gpu/peers.args)
  for o in ${PEERS_WORDORDER_OPTS:-}; do opts="$opts --wordorder-train-opt $o"; done
  local common="--work $work --data $PWD/.gpu/data/ja-en_small_parallel_enja --device $device
    --eole-python $py --eole-pythonpath $site --threads $threads"
  local parts=${PEERS_PARTS:-train decode}
  [[ " $parts " == *" train "* ]] && run peers_train "${PEERS_TRAIN_LIMIT:-110}" python3 benchmarks/bench_peers.py $train_args \
    $common --preset $preset $amp --batch-tokens $sizes $steps --rounds 1 $opts \
    --json $work/peers_train.json
  local graphs=""
  [[ ${PEERS_DECODE_GRAPHS:-0} == 1 ]] && graphs="--wordorder-cuda-graphs"
  [[ " $parts " == *" decode "* ]] && run peers_decode "${PEERS_DECODE_LIMIT:-65}" python3 benchmarks/bench_peers_decode.py \
    $decode_args $common --trained-only --test $test --rounds $rounds --bleu-tolerance 0.5 \
    $graphs --json $work/peers_decode.json
  python3 benchmarks/gpu/peers_summary.py $work/peers_train.json $work/peers_decode.json |
    tee $work/peers_summary.md
  # Back (one file): the JSONs, the summary and every run's own log and config, no models
  tar -C $work -czf "$OUT/peers.tar.gz" --exclude='*/model' \
    peers_train.json peers_decode.json peers_summary.md runs decode 2>/dev/null
  echo "   peers: $((SECONDS - t0)) s in all"
}

echo "== setup"
setup 2>&1 | tee "$OUT/setup.log"
phase() {
  case $1 in
    setup) ;;
    tests | train | dag | variants | compile | effects | effects_part | peers | concurrent | host | pilot_long | blocks_long) $1 ;;
    *) echo "unknown phase $1 (tests, train, dag, variants, compile, effects, effects_part, peers, concurrent, host, pilot_long, blocks_long)" >&2 ;;
  esac
}
for p in $phases; do  # A+B: A and B at once (e.g. the CUDA tests beside trainings that need no timing)
  if [[ $p == *+* ]]; then
    for q in ${p//+/ }; do phase "$q" & done
    wait
  else
    phase "$p"
  fi
done
