#!/usr/bin/env bash
# Run HERE (the CPU machine) before a GPU session: fills .gpu/ (git-ignored) with what the GPU
# machine lacks and cannot download (it has no network). The device tool then carries .gpu
# (carry: [".gpu"]) and benchmarks/gpu/check.sh uses it there. Needs `make install` first (the
# versions come from .venv).
#
#   bash benchmarks/gpu/prepare.sh [base] [peers]   (default: base)
#
#   base   the wheels of the packages wordorder needs beyond that machine's image (Python 3.12,
#          torch, numpy, sentencepiece, numba, ...), at the versions of this checkout's .venv
#          (.gpu/whl), and the corpora under ../shared/data that the checks read (.gpu/data):
#          every phase of check.sh needs them
#   peers  check.sh's `peers` phase (eole 0.6.4 against wordorder on the GPU; needs base too):
#          eole's wheels (.gpu/eole_whl) and .gpu/peers.tar.xz, a --work folder of
#          bench_peers*.py with the segmented training data of the training comparison and the
#          two models of the decoding comparison, trained HERE (a GPU call is too short for
#          it) by bench_peers_decode.py on their first use (eole 5,000 updates, wordorder
#          3,000, Transformer 2+2 d 128: 22 minutes on a quiet 2-core machine, an hour with
#          --threads 1 beside another job; PEERS_THREADS sets the threads, default 2), then
#          reused from benchmarks/.peers. The options of both comparisons go to .gpu/peers.args,
#          which check.sh reads, so the models are found by the settings they were trained with.
#
# Prints the size of each folder and of .gpu in all: the device tool carries at most 64 MiB
# with the repository (about 2 MiB of tracked files).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
[ -x "$py" ] || { echo "no .venv: run 'make install' first" >&2; exit 1; }

# pip download for the GPU machine: CPython 3.12, x86-64 manylinux, binaries only.
download() {  # download DIR SPEC...
  local dir=$1
  shift
  $py -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
    -d "$dir" "$@"
}

base() {
  # Not in the GPU image (its package list: the device tool's KINDS.md), with their own needs.
  # pandas and sacrebleu are there, at other versions: ours, so that tables and scores are the
  # ones CI tests.
  local need="snakemake snakemake-interface-common snakemake-interface-executor-plugins
snakemake-interface-logger-plugins snakemake-interface-report-plugins
snakemake-interface-scheduler-plugins snakemake-interface-storage-plugins
annotated-types argparse-dataclass conda-inject configargparse connection-pool docutils dpath
fastjsonschema gitdb gitpython greenlet humanfriendly immutables jsonschema
jsonschema-specifications jupyter-core nbformat platformdirs pulp pydantic pydantic-core
referencing rpds-py smart-open smmap sqlalchemy sqlmodel tenacity throttler traitlets
typing-inspection yte sacremoses pandas sacrebleu"
  local specs
  specs=$($py - $need <<'PY'
import importlib.metadata as md, sys
print(" ".join(f"{n}=={md.version(n)}" for n in sys.argv[1:]))
PY
)
  rm -rf .gpu/whl.tmp && mkdir -p .gpu/whl.tmp
  # connection-pool publishes no wheel: build its (pure-Python) one here
  local pure
  pure=$(tr ' ' '\n' <<<"$specs" | grep -i '^connection-pool==')
  $py -m pip wheel -q --no-deps -w .gpu/whl.tmp "$pure"
  download .gpu/whl.tmp $(tr ' ' '\n' <<<"$specs" | grep -vi '^connection-pool==')
  rm -rf .gpu/whl && mv .gpu/whl.tmp .gpu/whl

  rm -rf .gpu/data && mkdir -p .gpu/data
  # word-alignment-gold: the effects experiment's AER (the `effects` phase). Modification times
  # kept (-p): older than the outputs made from them, so Snakemake sees those outputs as up to
  # date.
  for d in multi30k_task1_en-de-cs ja-en_small_parallel_enja word-alignment-gold_awesome-align; do
    cp -rp "../shared/data/$d" .gpu/data/ && chmod -R u+w ".gpu/data/$d"
  done
}

# eole 0.6.4 with --no-deps, and what `eole train` and `eole predict` import beyond the GPU
# image, found by running both in a venv of torch and the image's packages alone: eole.bin
# imports every subcommand's module at start-up (the server's too: fastapi, starlette,
# uvicorn, and fastapi's opentelemetry-api), eole.inputters imports pyonmttok; pydantic and its
# three helpers (annotated-types, pydantic-core, typing-inspection) are installed from .gpu/whl
# (base). Not needed there and not carried: ctranslate2, spacy, datasets, fasttext, torchcodec,
# torch-optimi, subword-nmt, rapidfuzz, pyahocorasick, waitress (imported only by transforms,
# converters and engines these runs do not use). protobuf (eole pins 7.36.2) is imported only by
# the T5 converter.
EOLE_WHEELS="eole==0.6.4 pyonmttok==1.38.1 fastapi==0.165.0 starlette==1.10.0 uvicorn==0.54.0
opentelemetry-api==1.45.2"
# The two comparisons of check.sh's peers phase. Training: Transformer-base on all 50k Tanaka
# pairs (en->ja, joint BPE 8k); decoding: the models of docs/measured.md's CPU comparison (ja->en,
# BPE 4k, Transformer 2+2 d 128, eole 5,000 updates and wordorder 3,000 for equal BLEU).
PEERS_TRAIN="--direction en-ja --pairs 50000 --vocab 8000"
PEERS_DECODE="--direction ja-en --pairs 20000 --vocab 4000 --d 128 --ff 512 --heads 4 --layers 2
--batch-tokens 2000 --updates 3000 --eole-updates 5000 --warmup 300 --peak-lr 0.002 --seed 1"

peers() {
  for w in pydantic pydantic_core annotated_types typing_inspection; do
    ls .gpu/whl/"$w"-*.whl >/dev/null 2>&1 || {
      echo "no .gpu/whl/$w-*.whl: run 'benchmarks/gpu/prepare.sh base' first" >&2
      exit 1
    }
  done
  rm -rf .gpu/eole_whl.tmp && mkdir -p .gpu/eole_whl.tmp
  download .gpu/eole_whl.tmp $EOLE_WHEELS
  # These wheels and base's with their members LZMA-compressed instead of deflated where that is
  # smaller (pip reads either; it installs the same files): .gpu stays under the 64 MiB a call
  # carries (base 37.9 -> 30.1 MiB, eole's 18.0 -> 11.8, pyonmttok alone 16.8 -> 10.6).
  echo "repacking wheels (LZMA) ..."
  $py benchmarks/gpu/peers_pack.py repack .gpu/eole_whl.tmp .gpu/whl
  rm -rf .gpu/eole_whl && mv .gpu/eole_whl.tmp .gpu/eole_whl

  local work=benchmarks/.peers
  # The training comparison's data (segmented here: sentencepiece on 100k lines costs the GPU
  # call ~10 s otherwise) and the decoding comparison's models (trained here on first use).
  nice -n 10 $py benchmarks/bench_peers.py --work $work $PEERS_TRAIN --data-only
  nice -n 10 $py benchmarks/bench_peers_decode.py --work $work $PEERS_DECODE \
    --threads "${PEERS_THREADS:-2}" --rounds 0
  local train_data decode_data
  train_data=$(read -r _ d _ p _ v _ <<<"$PEERS_TRAIN"; echo "data_${d}_${p}_${v}")
  decode_data=$(read -r _ d _ p _ v _ <<<"$PEERS_DECODE"; echo "data_${d}_${p}_${v}")
  # Only what the GPU runs read (peers_pack.py says what and how)
  $py benchmarks/gpu/peers_pack.py pack $work .gpu/peers.tar.xz "$train_data" "$decode_data"
  printf 'train=%s\ndecode=%s\n' "$PEERS_TRAIN" "$(tr '\n' ' ' <<<"$PEERS_DECODE")" \
    > .gpu/peers.args
  ls -l .gpu/eole_whl | awk 'NR > 1 {printf "  %-75s %6.2f MiB\n", $9, $5 / 1048576}'
  du -ch .gpu/eole_whl/*.whl | tail -1 | sed 's/total$/eole wheels in all/; s/^/  /'
}

parts=${*:-base}
for p in $parts; do
  case $p in
    base | peers) $p ;;
    *) echo "unknown part $p (base, peers)" >&2; exit 1 ;;
  esac
done
du -sh .gpu/* | sed 's/^/  /'
total=$(du -sb .gpu | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
echo ".gpu: $((total / 1048576)) MiB; with the tracked files $(((total + tree) / 1048576)) MiB of the 64 MiB a device call carries"
if [ $(((total + tree) / 1048576)) -ge 62 ]; then
  echo "WARNING: too close to 64 MiB; base's wheels deflated again? 'prepare.sh peers' repacks them" >&2
fi
echo "ready: carry .gpu and run benchmarks/gpu/check.sh on the GPU machine"
