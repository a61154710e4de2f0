#!/usr/bin/env bash
# Installs the Debian 12 packages fusim needs, only those missing. Runs apt as root
# (directly when root, else through sudo). Safe to run again.
set -euo pipefail
packages=(
  cmake g++ ninja-build make pkg-config
  libboost-graph-dev nlohmann-json3-dev libfmt-dev catch2 libcli11-dev
  libtorch-dev python3-torch python3-torchvision python3-matplotlib
  # Debian's libtorch links the generic libblas.so.3 (BLAS_INFO=generic); without an
  # optimized provider that is netlib's reference BLAS (1.6 GFLOP/s on a 256x512x512 GEMM
  # here). OpenBLAS registers itself as the libblas.so.3 alternative: 32 GFLOP/s. The
  # OpenMP build shares libtorch's OpenMP threads; the pthread build (if also installed, it
  # wins the alternative) oversubscribes the cores and tripled measured step times here.
  libopenblas0-openmp
  libopenmpi-dev openmpi-bin
  # clang's sanitizer and libFuzzer runtimes are only a Recommends of clang (apt here does not
  # install recommends): without them the reliability build (scripts/reliability.sh) cannot link.
  clang libclang-rt-14-dev valgrind
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "fusim setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
