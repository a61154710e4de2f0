#!/usr/bin/env bash
# The second CI step (issue 9), README "Reliability checks": one clang build of the whole
# test suite and every libFuzzer target with AddressSanitizer + UBSan (+ libFuzzer's coverage
# instrumentation, harmless for the tests), then
#   1. the test suite under the sanitizers: any ASan/UBSan/LSan report fails its test;
#   2. every fuzz target for $FUSIM_CI_FUZZ_SECONDS (default 20) s on its seed corpus.
# One build serves both (a separate gcc ASan build plus a clang fuzz build would double the
# build, the largest part of CI's 45 minutes on 2 cores). Left out, all covered by the
# normal suite (.ci/run, step 1):
#  - the libtorch backend: its 18 torch-heavy translation units would double the build;
#  - MPI (-DFUSIM_WITH_MPI=OFF): mpirun under ASan is untested; sweeps run in one process;
#  - the large fidelity comparisons on resnet18 and gpt2-small (block vs line: 8-15 min each
#    under ASan; tensor vs line: 70-220 s each, 8 min of the 2-core suite's 9.5 together):
#    the MLP comparisons (block vs line, tensor vs line) run the same code paths, every
#    ordering, and tests/residency checks the range and set models against the line caches.
# Build folder: $FUSIM_RELIABILITY_BUILD_DIR (default build-reliability).
# FUSIM_SKIP_SANITIZE=1 / FUSIM_SKIP_FUZZ=1 leave step 1 / 2 out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSIM_RELIABILITY_BUILD_DIR:-$root/build-reliability}
jobs=${FUSIM_JOBS:-$(nproc)}
"$root/scripts/setup.sh"
if [ ! -f "$build/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # ccache (as scripts/build.sh): a rerun or a clean clone on a warm cache is mostly hits.
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -gline-tables-only: the file:line of every frame a sanitizer report or a fuzz reproducer
  # prints, for 13% less compile time than full -g (measured on tests/exec, clang 14).
  # sim/cli at -O0: a command file took 34 s at -O2, 15 s at -O0 (-O1: 32 s), a quarter of
  # this build; the commands only parse options and print, the libraries stay at -O2.
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" "${generator[@]}" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DFUSIM_FUZZ=ON -DFUSIM_TESTS=ON -DFUSIM_WITH_TORCH=OFF -DFUSIM_WITH_MPI=OFF \
    -DFUSIM_CLI_COMPILE_OPTIONS=-O0 >&2
fi
echo "fusim reliability: building tests and fuzz targets with ASan + UBSan in $build" >&2
t0=$SECONDS
cmake --build "$build" -j "$jobs" >&2
echo "fusim reliability: sanitized build took $((SECONDS - t0)) s" >&2

if [ "${FUSIM_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "fusim reliability: the test suite under ASan + UBSan + LSan" >&2
  t0=$SECONDS
  # abort_on_error / halt_on_error: a report ends the test with a failure, not a scroll-by.
  (cd "$build" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j "$jobs" --timeout 900 -LE fuzz \
      -E "(block|tensor) vs line fidelity on (resnet18|gpt2-small)|tensor fidelity with set conflicts")
  echo "fusim reliability: sanitized suite took $((SECONDS - t0)) s" >&2
fi

if [ "${FUSIM_SKIP_FUZZ:-0}" != 1 ]; then
  echo "fusim reliability: fuzzing each input format for ${FUSIM_CI_FUZZ_SECONDS:-20} s" >&2
  t0=$SECONDS
  # One target per core: each still gets its seconds, the step takes half the wall time.
  FUSIM_FUZZ_PARALLEL=${FUSIM_FUZZ_PARALLEL:-$jobs} FUSIM_FUZZ_BUILD_DIR=$build \
    "$root/scripts/fuzz.sh" "${FUSIM_CI_FUZZ_SECONDS:-20}"
  echo "fusim reliability: fuzzing took $((SECONDS - t0)) s" >&2
fi
