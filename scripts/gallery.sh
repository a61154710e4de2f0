#!/bin/bash
# Regenerates every figure, CSV and number of README.md's gallery (issue 23, point 6), so
# that the README cannot go stale: run it whenever the model changes, and say so in the
# commit. Each CSV starts with provenance lines that scripts/plot_sweep.py reads for the
# figures' subtitles:
#   # fusim <commit>[+dirty]
#   # command: fusim sweep ... -o docs/gallery/NAME.csv
#   # wall: <seconds> s, <cores> cores, load average <load> before
# then the sweep's own CSV. The README's findings (between the gallery-findings markers)
# are written from those files by scripts/gallery_findings.py, as are docs/gallery/
# findings.md.
#
# Usage: scripts/gallery.sh [--quick | --plots-only]
#   --quick       leave out the 100-point resnet50 grid (1-2 min on 2 cores); its CSV and
#                 figures stay as they are, with the commit that made them
#   --plots-only  no sweep: redraw every figure and rewrite the findings from the CSVs as
#                 they are (after a change to the plotting scripts only)
# Environment: BUILD (default build), JOBS (sweep threads, default 2), ERROR_PCT and
# ERROR_SOURCE (the simulated-vs-measured error the figures' notes compare against).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
plots_only=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    --plots-only) plots_only=1 quick=1 ;;
    *) echo "gallery.sh: unknown argument $a (expected --quick or --plots-only)" >&2; exit 2 ;;
  esac
done
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}
# The figures compare orderings, so the error that matters is the predicted speedup's:
# the analytic path's mean error against measured runs, 2.5 points over 36 fused orderings
# of 6 torchvision models (scripts/fidelity_check.py, 2026-12-05; README, "Where it
# stands"). Rerun that check and set ERROR_PCT/ERROR_SOURCE when the model changes.
ERROR_PCT=${ERROR_PCT:-2.5}
ERROR_SOURCE=${ERROR_SOURCE:-"the analytic path's mean speedup error against measured runs"}
OUT=docs/gallery
FUSIM=$(cd "$BUILD" && pwd)/fusim
[ -x "$FUSIM" ] || { echo "gallery.sh: $FUSIM: not built (scripts/build.sh)" >&2; exit 2; }
COMMIT=$(git rev-parse HEAD)
git diff --quiet HEAD -- sim models || COMMIT="$COMMIT+dirty"
work=$(mktemp -d "$OUT/.gallery.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$EPOCHREALTIME
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# sweep NAME ARGS...: `fusim sweep ARGS` in $work, then $OUT/NAME.csv with its provenance
# (renamed into place: a killed run leaves the old file).
sweep() {
  local name=$1
  shift
  [ "$plots_only" = 0 ] || return 0
  local load t0 wall
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$EPOCHREALTIME
  (cd "$work" && "$FUSIM" sweep "$@" --jobs "$JOBS" -q -o "$name.csv")
  wall=$(seconds_since "$t0")
  {
    echo "# fusim $COMMIT"
    echo "# command: fusim sweep $* -o $OUT/$name.csv"
    echo "# wall: $wall s, $(nproc) cores, load average $load before"
    cat "$work/$name.csv"
  } >"$work/$name.with-provenance"
  mv "$work/$name.with-provenance" "$OUT/$name.csv"
  echo "gallery: $OUT/$name.csv ($wall s)"
}

plot() {
  /usr/bin/python3 scripts/plot_sweep.py "$@" --error-pct "$ERROR_PCT" \
    --error-source "$ERROR_SOURCE"
}

# MLP + Adam on the Xeon 8380 preset: LLC size, then DRAM channels at a 12 MiB LLC.
mlp=(--trace mlp --batch 8 --machine xeon-8380-ddr4 --optimizer adam --fidelity block)
sweep llc "${mlp[@]}" --set caches.LLC.size=3MiB,6MiB,12MiB,24MiB,48MiB
plot $OUT/llc.csv --x caches.LLC.size --y speedup_vs_eager --hue ordering \
  --title "Speedup over eager vs LLC size" -o $OUT/speedup_vs_llc.png
plot $OUT/llc.csv --x caches.LLC.size --y dram_bytes --hue ordering \
  --title "DRAM traffic per step vs LLC size" -o $OUT/dram_vs_llc.png
sweep channels "${mlp[@]}" --set caches.LLC.size=12MiB --set dram.channels=2,4,8,16
plot $OUT/channels.csv --x dram.channels --y speedup_vs_eager --hue ordering \
  --title "Speedup over eager vs DRAM channels" -o $OUT/speedup_vs_channels.png

# resnet50 (batch 1, 112x112) + Adam on the H100 preset: L2 size, HBM data rate.
[ "$plots_only" = 1 ] || "$FUSIM" trace gen resnet50 --batch 1 --resolution 112 -o "$work/r50_b1_112.json"
r50=(--trace r50_b1_112.json --machine h100-sxm5 --optimizer adam --steps 3 --fidelity block)
sweep h100_resnet50_l2 "${r50[@]}" --set caches.L2.size=25MiB,50MiB,100MiB,200MiB,400MiB
plot $OUT/h100_resnet50_l2.csv --x caches.L2.size --y dram_bytes --hue ordering \
  --title "DRAM (HBM) traffic per step vs L2 size" -o $OUT/h100_dram_vs_l2.png
plot $OUT/h100_resnet50_l2.csv --x caches.L2.size --y step_time_ms --hue ordering \
  --title "Step time vs L2 size" -o $OUT/h100_step_vs_l2.png
sweep h100_resnet50_hbm "${r50[@]}" --set dram.data_rate_mts=2600,3900,5200,6400
plot $OUT/h100_resnet50_hbm.csv --x dram.data_rate_mts --y speedup_vs_eager --hue ordering \
  --title "Speedup over eager vs HBM data rate" -o $OUT/h100_speedup_vs_hbm.png
# The 100-point grid at the full batch (32, 224x224), tensor fidelity (issue 17).
if [ "$quick" = 0 ]; then
  "$FUSIM" trace gen resnet50 --batch 32 --resolution 224 -o "$work/r50_b32.json"
  sweep h100_resnet50_l2_hbm_100 --trace r50_b32.json --machine h100-sxm5 --optimizer adam \
    --steps 3 --fidelity tensor \
    --set caches.L2.size=25MiB,50MiB,75MiB,100MiB,125MiB,150MiB,200MiB,250MiB,300MiB,400MiB \
    --set dram.data_rate_mts=2400,2800,3200,3600,4000,4400,4800,5200,5600,6400
fi
plot $OUT/h100_resnet50_l2_hbm_100.csv --x caches.L2.size --y dram.data_rate_mts \
  --z hit_rate.L2 --where ordering=backward-fused \
  --title "L2 hit rate, backward-fused" -o $OUT/h100_l2_hit_heatmap.png
plot $OUT/h100_resnet50_l2_hbm_100.csv --x caches.L2.size --y hit_rate.L2 --hue ordering \
  --where dram.data_rate_mts=5200 --title "L2 hit rate vs L2 size" \
  -o $OUT/h100_l2_hit_vs_l2.png

/usr/bin/python3 scripts/gallery_findings.py --gallery $OUT --readme README.md \
  --error-pct "$ERROR_PCT" --error-source "$ERROR_SOURCE"
echo "gallery: done in $(seconds_since "$started") s wall ($(
  if [ "$plots_only" = 1 ]; then echo "plots only: every CSV kept"
  elif [ "$quick" = 1 ]; then echo "quick: the 100-point grid kept"
  else echo "everything"; fi))"
