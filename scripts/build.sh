#!/usr/bin/env bash
# Configures and builds fusim into ./build (or $FUSIM_BUILD_DIR). Extra args go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSIM_BUILD_DIR:-$root/build}
jobs=${FUSIM_JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# ccache, where installed, keeps object files across build folders and clean rebuilds.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -g1 (line tables and functions, no variables: enough for backtraces and sanitizer
# reports) instead of -g: gcc 12 compiles the libtorch backend's files in half the time and
# the CLI's in two thirds (measured: op_profiler.cpp 18.0 -> 8.8 s, sweep_cmd.cpp 17.8 ->
# 12.2 s), a third of the quick start's build. For full debug info, pass
# -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG" (extra args go to cmake).
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" "${launcher[@]}" "$@" >&2
fi
cmake --build "$build" -j "$jobs" >&2
