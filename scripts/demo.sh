#!/usr/bin/env bash
# README quick start, command 1: install what is missing, build, run the main job on a
# bundled trace and machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$root"
./build/fusim trace show traces/resnet18.json
