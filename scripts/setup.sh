#!/usr/bin/env bash
# Installs what building and testing moec needs from Debian's packages, and
# nothing when it is all there already. Quiet unless something is missing;
# fails with a message naming the packages it could not install.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libgtest-dev libfmt-dev libomp-22-dev
  libopenmpi-dev openmpi-bin
  python3-matplotlib python3-numpy python3-torch
  nlohmann-json3-dev pybind11-dev python3-pybind11 python3-dev python3-pytest
  clang-22 libclang-rt-22-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo=(sudo); else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! "${sudo[@]}" apt-get update -qq >"$log" 2>&1 ||
   ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "setup: could not install: ${missing[*]} (apt output above)." >&2
  echo "setup: moec needs Debian 12 with LLVM/MLIR 22 packages available to apt." >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "setup: done" >&2
