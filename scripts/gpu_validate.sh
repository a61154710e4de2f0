#!/bin/bash
# Builds fusim against the CUDA libtorch that ships with PyTorch on this machine and runs
# `fusim validate --device cuda` on the H200 preset for resnet50 and gpt2-small.
# Run from the repository root on a machine with an NVIDIA GPU:  scripts/gpu_validate.sh
# Outputs go to ${OUT:-gpu-validate}/: validate tables (.txt), JSON, and a scatter PNG.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-validate}
BUILD=${BUILD:-build-cuda}
PY=${PYTHON:-python3}
STEPS=${STEPS:-20}
mkdir -p "$OUT"

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
PREFIX=$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')
"$PY" -c 'import torch; assert torch.cuda.is_available(), "this torch has no CUDA"; print("torch", torch.__version__, "cuda", torch.version.cuda)' | tee -a "$OUT/gpu.txt"

# The pip wheel is built with the pre-C++11 ABI on older releases; CMake picks the flag up
# from TorchConfig. Only the targets validate needs.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUSIM_TESTS=OFF \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DFUSIM_WITH_MPI=OFF
cmake --build "$BUILD" --target fusim -j"$(nproc)"

for model in resnet50 gpt2-small; do
  for opt in adam sgd; do
    echo "== $model, $opt" | tee -a "$OUT/summary.txt"
    "$BUILD/fusim" validate --trace "traces/$model.json" --machine h200 --device cuda \
      --ordering all --optimizer "$opt" --measured-steps "$STEPS" --warmup 5 --json \
      > "$OUT/$model-$opt.json"
    "$PY" - "$OUT/$model-$opt.json" <<'PYEOF' | tee -a "$OUT/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{'ordering':16} {'pred ms':>9} {'meas ms':>9} {'err %':>7} {'pred x':>7} {'meas x':>7}")
for r in d["results"]:
    print(f"{r['ordering']:16} {r['predicted_ms']:9.3f} {r['measured_ms']:9.3f} "
          f"{r['error_pct']:+7.1f} {r.get('predicted_speedup', 0):7.3f} "
          f"{r.get('measured_speedup', 0):7.3f}")
print(f"MAPE {d['mape']:.1f} %")
PYEOF
  done
done
/usr/bin/python3 scripts/plot_validation.py -o "$OUT/validation-h200.png" "$OUT"/*-*.json \
  || echo "plot skipped (matplotlib missing)"
