#!/usr/bin/env bash
# README quick start, command 1: install what is missing, build, run the main job on a
# bundled trace and machine: predict the step time of eager, backward-fused and
# forward-fused Adam on an Ice Lake-SP server (models/machines/xeon-8380-ddr4.json).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$root"
./build/fusim simulate --trace traces/mlp.json --machine xeon-8380-ddr4 --optimizer adam \
  --ordering all --fidelity block --steps 4
# --steps 4: forward-fused runs its first updates in step 1, so it needs one more warm-up
# step than eager before its steady state (the default of 3 leaves it one step short).
