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
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@" >&2
fi
cmake --build "$build" -j "$jobs" >&2
