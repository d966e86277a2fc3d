#!/usr/bin/env bash
# Installs what the benchmark peers need from Debian 12's packages:
# python3-torch (PyTorch 1.13, with python3-numpy) for bench/peers/torch_moe.py
# libopenblas0-pthread, the BLAS Debian's torch does its f32 matmuls with
# (without it, the libblas.so.3 alternative is the reference BLAS at ~3.5
# GFLOP/s, and torch f32 would measure that; installing it switches the
# alternative system-wide, numpy included), and libdnnl-dev (oneDNN 2.x) for
# moe-peer-onednn. Idempotent: does nothing when all are installed already.
set -euo pipefail

packages=(python3-torch libopenblas0-pthread libdnnl-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 &&
    [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] ||
    missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup-peers: installing ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo=(sudo); else
    echo "setup-peers: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 ||
   ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
       apt-get install -y -qq "${missing[@]}" >>"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "setup-peers: could not install: ${missing[*]} (apt output above)" >&2
  exit 1
fi
echo "setup-peers: done" >&2
