#!/usr/bin/env bash
# Fuzzes every input format of fusim with libFuzzer (clang, ASan + UBSan), see fuzz/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]    configure + build $FUSIM_FUZZ_BUILD_DIR
#                                            (default build-fuzz), run each target SECONDS
#                                            (default 60) on its seed corpus
#   scripts/fuzz.sh --run-one EXE NAME SECONDS   one target (what CTest label "fuzz" runs)
#
# Longer run (documented in fuzz/README.md): scripts/fuzz.sh 3600. The mutation seed is
# $FUSIM_FUZZ_RUNS (default: none) also stops each target after that many inputs (the long
# run's goal is 10^6 inputs per format, which the fast targets reach well before 3600 s). The mutation seed is
# $FUSIM_FUZZ_SEED (default 1): the same seed, corpus and build replay the same inputs, so a
# CI finding reproduces (a time-limited run may stop at another input on a loaded machine). A crash, a hang (> 1 s
# on one input, 10 s for fuzz_cli's whole commands), a leak, an uncaught non-InputError exception or any sanitizer report fails
# the run; the reproducer is left in the target's work folder and named on stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSIM_FUZZ_BUILD_DIR:-$root/build-fuzz}

# Seed corpus of a target: the bundled files of its format plus fuzz/seeds/NAME.
seed_dirs() {
  case "$1" in
    trace) echo "$root/traces" "$root/traces/examples" "$root/tests/workload/data" ;;
    machine) echo "$root/models/machines" ;;
    dram_config) echo "$root/models/machines/dram" ;;
  esac
  [ -d "$root/fuzz/seeds/$1" ] && echo "$root/fuzz/seeds/$1"
  return 0
}

run_one() {
  local exe=$1 name=$2 seconds=$3
  local work=$build/fuzz-work/$name
  mkdir -p "$work/corpus" "$work/artifacts"
  for d in $(seed_dirs "$name"); do
    find "$d" -maxdepth 1 -type f \( -name '*.json' -o -name '*.txt' -o -name '*.trc' \
      -o -name '*.csv' \) \
      -exec cp -f {} "$work/corpus/" \;
  done
  local log=$work/fuzz.log
  # -timeout=1: an input taking over a second is a hang. -rss_limit_mb: resource limits must
  # refuse huge configs before allocating (issue 9), so 2 GiB is plenty. fuzz_cli runs whole
  # commands: the README's llama-3.1-70b `memory` plan alone takes 1.7 s under ASan at load
  # 16 (0.17 s uninstrumented), so 10 s there.
  local per_input=1
  [ "$name" = cli ] && per_input=10
  # On a loaded machine (a long run beside builds) a 1 s wall-clock limit reports descheduled
  # inputs as hangs: FUSIM_FUZZ_TIMEOUT raises it (a real hang still never ends).
  per_input=${FUSIM_FUZZ_TIMEOUT:-$per_input}
  local rc=0
  local t0=$SECONDS
  local runs_cap=()
  [ -n "${FUSIM_FUZZ_RUNS:-}" ] && runs_cap=(-runs="$FUSIM_FUZZ_RUNS")
  # A 256 MiB model budget (core/memory_budget.h) keeps legal-but-huge configs fast to refuse.
  FUSIM_MEMORY_BUDGET=${FUSIM_MEMORY_BUDGET:-256MiB} \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
    "$exe" "$work/corpus" -seed="${FUSIM_FUZZ_SEED:-1}" -max_total_time="$seconds" "${runs_cap[@]}" -timeout="$per_input" -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    >"$log" 2>&1 || rc=$?
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    tail -40 "$log" >&2
    echo "fuzz $name: FAILED after ${runs:-?} inputs; reproducer in $work/artifacts/" >&2
    return 1
  fi
  echo "fuzz $name: ${runs:-?} inputs in $((SECONDS - t0)) s (limit ${seconds} s${FUSIM_FUZZ_RUNS:+, ${FUSIM_FUZZ_RUNS} inputs}), no finding (corpus $(ls "$work/corpus" | wc -l) files)"
}

if [ "${1:-}" = "--run-one" ]; then
  run_one "$2" "$3" "$4"
  exit
fi

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(trace machine cache_config address_trace dram_config dram_trace
  mixed sweep_set sweep_resume cli)
if [ ! -f "$build/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFUSIM_FUZZ=ON -DFUSIM_TESTS=OFF -DFUSIM_WITH_TORCH=OFF -DFUSIM_WITH_MPI=OFF >&2
fi
cmake --build "$build" --target "${targets[@]/#/fuzz_}" -j "${FUSIM_JOBS:-2}" >&2
# FUSIM_FUZZ_PARALLEL=N runs up to N targets at once (the long run: 10 targets x 3600 s is
# 10 hours one after the other, 1 h with FUSIM_FUZZ_PARALLEL=10); each target's summary line is
# printed when all are done, and also kept in its work folder (summary.txt).
parallel=${FUSIM_FUZZ_PARALLEL:-1}
status=0
if [ "$parallel" -le 1 ]; then
  for t in "${targets[@]}"; do
    run_one "$build/fuzz/fuzz_$t" "$t" "$seconds" || status=1
  done
  exit $status
fi
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  mkdir -p "$build/fuzz-work/$t"
  (rc=0; run_one "$build/fuzz/fuzz_$t" "$t" "$seconds" >"$build/fuzz-work/$t/summary.txt" 2>&1 || rc=$?
   echo "$rc" >"$build/fuzz-work/$t/rc") &
done
wait
for t in "${targets[@]}"; do
  cat "$build/fuzz-work/$t/summary.txt"
  [ "$(cat "$build/fuzz-work/$t/rc")" = 0 ] || status=1
done
exit $status
