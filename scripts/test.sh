#!/usr/bin/env bash
# README quick start, command 2: install what is missing, build, run the whole test suite.
# Then (CI reliability steps, issue 9):
#  2. the test suite again, built with ASan + UBSan and without the libtorch backend, in
#     $FUSIM_SANITIZE_BUILD_DIR (default build-sanitize); any sanitizer report fails a test;
#  3. every libFuzzer target for $FUSIM_CI_FUZZ_SECONDS (default 20) seconds on its seed
#     corpus, built with clang in $FUSIM_FUZZ_BUILD_DIR (default build-fuzz).
# Steps 2 and 3 triple the build time (three full builds on CI's 2 cores exceed its
# 25-minute budget), so they run only with FUSIM_RELIABILITY=1: the second CI step,
#   FUSIM_RELIABILITY=1 scripts/test.sh
# FUSIM_SKIP_SANITIZE=1 / FUSIM_SKIP_FUZZ=1 then leave step 2 / 3 out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${FUSIM_JOBS:-$(nproc)}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
(cd "${FUSIM_BUILD_DIR:-$root/build}" && ctest --output-on-failure -j "$jobs" --timeout 600)

if [ "${FUSIM_RELIABILITY:-0}" != 1 ]; then
  exit 0
fi

if [ "${FUSIM_SKIP_SANITIZE:-0}" != 1 ]; then
  san=${FUSIM_SANITIZE_BUILD_DIR:-$root/build-sanitize}
  echo "fusim test: sanitizer build (ASan + UBSan) in $san" >&2
  FUSIM_BUILD_DIR=$san "$root/scripts/build.sh" -DFUSIM_SANITIZE=ON -DFUSIM_WITH_TORCH=OFF
  # halt_on_error: a UBSan report aborts the test instead of scrolling by.
  (cd "$san" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j "$jobs" --timeout 900)
fi

if [ "${FUSIM_SKIP_FUZZ:-0}" != 1 ]; then
  echo "fusim test: fuzzing each input format for ${FUSIM_CI_FUZZ_SECONDS:-20} s" >&2
  "$root/scripts/fuzz.sh" "${FUSIM_CI_FUZZ_SECONDS:-20}"
fi
