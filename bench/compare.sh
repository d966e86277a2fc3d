#!/usr/bin/env bash
# Runs moe-bench and the peers (PyTorch eager, oneDNN per-expert loop) in turn
# on the same shapes and the same routing, then prints the side-by-side table
# with the ratios (bench/table.py). Environment: TOKENS HIDDEN MLP EXPERTS
# TOPKS ("8 2") DTYPES ("f32 bf16") PASSES ("forward"; "forward forward_backward"
# adds the training pass, against the PyTorch peer only: oneDNN has no
# autograd) REMAT ("none"; forward_backward's --remat, e.g.
# "none,expert_mlp,combine") ITERS (3) THREADS (2) PEERS ("torch onednn"; e.g.
# "onednn" for bf16 on a CPU without AVX512_BF16, where PyTorch's bf16 matmul
# takes minutes a call); ROUNDS (1) repeats the whole sequence, so that each
# ratio is the median of ROUNDS ratios of runs minutes apart, with its range
# (a shared host's speed drifts over minutes: one round's ratio moves with
# it); LOG_DIR keeps the raw output (default: a temporary directory).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MOEC_BUILD_DIR:-$root/build}
T=${TOKENS:-4096} H=${HIDDEN:-2048} M=${MLP:-1408} E=${EXPERTS:-60}
TOPKS=${TOPKS:-"8 2"} DTYPES=${DTYPES:-"f32 bf16"} PASSES=${PASSES:-"forward"}
ITERS=${ITERS:-3} THREADS=${THREADS:-2} REMAT=${REMAT:-none} PEERS=${PEERS:-"torch onednn"}
ROUNDS=${ROUNDS:-1}
if ! [[ $ROUNDS =~ ^[1-9][0-9]*$ ]]; then
  echo "compare.sh: ROUNDS must be a whole number of 1 or more (got '$ROUNDS')" >&2
  exit 2
fi
for peer in $PEERS; do
  if [[ $peer != torch && $peer != onednn ]]; then
    echo "compare.sh: PEERS names '$peer'; the peers are torch and onednn" >&2
    exit 2
  fi
done
runs_peer() { [[ " $PEERS " == *" $1 "* ]]; }
# oneDNN has no autograd: alone, it needs a forward pass to run in.
if ! runs_peer torch && [[ " $PASSES " != *" forward "* ]]; then
  echo "compare.sh: PEERS='$PEERS' runs the forward only, and PASSES='$PASSES' has none: nothing to compare" >&2
  exit 2
fi
log=${LOG_DIR:-$(mktemp -d)}
mkdir -p "$log"
# One run per log: table.py must not mix in a previous run's lines.
: > "$log/run.txt"

bash "$root/bench/setup-peers.sh"
bash "$root/scripts/build.sh" moe-bench >/dev/null
if runs_peer onednn; then
  # A build configured before setup-peers.sh installed oneDNN has no peer
  # target yet: configure again, which finds it now.
  if ! ninja -C "$build" -t targets all 2>/dev/null | grep -q '^moe-peer-onednn:'; then
    cmake "$build" >/dev/null
  fi
  bash "$root/scripts/build.sh" moe-peer-onednn >/dev/null
fi

# OpenBLAS 0.3.21 takes an AVX-512 Zen 4 for a Prescott (SSE3) without the
# core type, so it is named there; elsewhere its own detection is right, and
# SkylakeX's kernels on an AVX2-only CPU die of an illegal instruction.
blas_env=(OPENBLAS_NUM_THREADS="$THREADS")
if grep -qw avx512f /proc/cpuinfo; then blas_env+=(OPENBLAS_CORETYPE=SkylakeX); fi

ks=$(echo $TOPKS | tr ' ' ',')
peer_runs=0 peer_failures=0
for ((round = 1; round <= ROUNDS; ++round)); do
  suffix=""
  if (( ROUNDS > 1 )); then
    suffix="-round$round"
    echo "ROUND $round of $ROUNDS" | tee -a "$log/run.txt"
  fi
  for dt in $DTYPES; do
    for p in $PASSES; do
      # Stage timing is the forward's; forward_backward measures remat policies.
      if [[ $p == forward ]]; then per_pass=(--stage-timing); else per_pass=(--remat "$REMAT"); fi
      "$build/bin/moe-bench" --tokens "$T" --hidden "$H" --mlp-dim "$M" --experts "$E" \
        --topk-list "$ks" --dtype "$dt" --bench-pass "$p" --iters "$ITERS" --warmup 1 \
        --threads "$THREADS" "${per_pass[@]}" --dump-routing "$log/routing" \
        --json "$log/moe-bench-$dt-$p$suffix.json" | tee -a "$log/run.txt"
      for k in $TOPKS; do
        common=(--routing "$log/routing/random-top$k" --hidden "$H" --mlp-dim "$M" --experts "$E"
                --dtype "$dt" --iters "$ITERS" --warmup 1 --threads "$THREADS")
        # A peer that fails (its error above) leaves its column empty; the
        # other runs go on.
        if runs_peer torch; then
          peer_runs=$((peer_runs + 1))
          if ! env "${blas_env[@]}" /usr/bin/python3 "$root/bench/peers/torch_moe.py" "${common[@]}" \
              --pass "$p" | tee -a "$log/run.txt"; then
            echo "compare.sh: the PyTorch peer failed ($dt $p top-$k): its column stays empty" >&2
            peer_failures=$((peer_failures + 1))
          fi
        fi
        # oneDNN has no autograd: it is a forward peer only.
        if [[ $p == forward ]] && runs_peer onednn; then
          peer_runs=$((peer_runs + 1))
          if ! "$build/bin/moe-peer-onednn" "${common[@]}" | tee -a "$log/run.txt"; then
            echo "compare.sh: the oneDNN peer failed ($dt top-$k): its column stays empty" >&2
            peer_failures=$((peer_failures + 1))
          fi
        fi
      done
    done
  done
done
echo
# Exit code 3 with a warning when a rate beat its unit's quoted peak, else 4
# when every peer run failed (moec's figures, but nothing to compare them
# with): the table is printed either way.
status=0
/usr/bin/python3 "$root/bench/table.py" "$log/run.txt" || status=$?
echo "(raw output in $log)"
if (( peer_runs > 0 && peer_failures == peer_runs )); then
  echo "compare.sh: every peer run failed ($peer_failures of $peer_runs): no ratios" >&2
  (( status != 0 )) || status=4
fi
exit $status
