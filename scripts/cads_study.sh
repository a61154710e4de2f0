#!/usr/bin/env bash
# Issue #22's study: eager vs backward-fused vs forward-fused, each DRAM scheduler (fcfs,
# frfcfs, frfcfs-cap, stream-aware, cads), on a GPU and a CPU preset. One sweep per machine
# (the scheduler is a swept field); step times in the CSVs, then one plot per machine.
# Long: line fidelity moves every 64 B line through the DRAM controller, where the
# scheduler acts (block fidelity too, by 4 KiB units). Run on a quiet machine:
#   scripts/cads_study.sh [OUT_DIR]   (default build/cads_study)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fusim=${FUSIM:-$root/build/fusim}
out=${1:-$root/build/cads_study}
trace=${CADS_TRACE:-resnet18}
batch=${CADS_BATCH:-8}
fidelity=${CADS_FIDELITY:-block}
mkdir -p "$out"
for machine in h100-sxm5 xeon-8380-ddr4; do
  "$fusim" sweep --trace "$trace" --batch "$batch" --machine "$machine" --optimizer adam \
    --ordering eager,backward-fused,forward-fused --fidelity "$fidelity" \
    --set dram.scheduler=fcfs,frfcfs,frfcfs-cap,stream-aware,cads \
    --jobs "${FUSIM_JOBS:-2}" -o "$out/$machine.csv"
  "$root/scripts/plot_sweep.py" "$out/$machine.csv" --x dram.scheduler --y step_time_ms \
    --hue ordering --title "$trace b$batch on $machine" -o "$out/$machine.png"
done
echo "cads study: $out/h100-sxm5.csv $out/xeon-8380-ddr4.csv" >&2
