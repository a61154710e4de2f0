#!/usr/bin/env bash
# README quick start, command 1: install what is missing, build, then the main job:
#  1. predict the step time of eager, backward-fused and forward-fused Adam for the bundled
#     MLP on an Ice Lake-SP server (models/machines/xeon-8380-ddr4.json);
#  2. measure this host into a machine model once (`fusim calibrate`, cached in
#     models/machines/host.json, which git ignores; delete it to re-measure);
#  3. validate: predict on the calibrated host and run the same op lists with libtorch
#     here, side by side, with the error of each prediction, then per op kind x layer op
#     (--per-op): where the step's error comes from.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$root"
# --steps 4: forward-fused runs its first updates in step 1, so it needs one more warm-up
# step than eager before its steady state.
./build/fusim simulate --trace traces/mlp.json --machine xeon-8380-ddr4 --optimizer adam \
  --ordering all --fidelity block --steps 4
echo
host=models/machines/host.json
if [ ! -s "$host" ]; then
  ./build/fusim calibrate -o "$host"
  echo
else
  echo "demo: using the cached calibration $host (delete it to measure this host again)" >&2
fi
./build/fusim validate --trace traces/mlp.json --machine "$host" --optimizer adam --ordering all \
  --per-op
