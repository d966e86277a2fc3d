#!/usr/bin/env bash
# Every parallel mode of one block, measured by moe-bench in one session on
# this machine (every shard in-process), with the cost model's prediction
# beside each, then the table (bench/parallel_table.py). Environment: TOKENS
# (4096; a list such as "1024 4096" sweeps the batch) HIDDEN MLP EXPERTS TOPK
# (8) PASS (forward | forward_backward) MODES ("none dp ep-dense ep-compact
# ep-ring ep-a2a") DEVICES (2) THREADS (2) ITERS (3) CORE_GFLOPS LINK_GBPS (the
# cost model's machine; default: measured once at the start); LOG_DIR keeps the
# raw output (default: a temporary directory).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MOEC_BUILD_DIR:-$root/build}
TOKENS=${TOKENS:-4096} H=${HIDDEN:-2048} M=${MLP:-1408} E=${EXPERTS:-60} K=${TOPK:-8}
PASS=${PASS:-forward} DEVICES=${DEVICES:-2} THREADS=${THREADS:-2} ITERS=${ITERS:-3}
MODES=${MODES:-"none dp ep-dense ep-compact ep-ring ep-a2a"}
log=${LOG_DIR:-$(mktemp -d)}
mkdir -p "$log"
: > "$log/parallel.txt"
bash "$root/scripts/build.sh" moe-bench >/dev/null
# One machine description for every prediction of the run: the core rate
# and the link measured once here (each moe-bench would measure its own).
if [[ -z ${CORE_GFLOPS:-} || -z ${LINK_GBPS:-} ]]; then
  machine=$("$build/bin/moe-bench" --predict-only --threads "$THREADS" --devices "$DEVICES" | grep "^model: core")
  CORE_GFLOPS=${CORE_GFLOPS:-$(echo "$machine" | sed -E 's/model: core ([0-9.]+) .*/\1/')}
  LINK_GBPS=${LINK_GBPS:-$(echo "$machine" | sed -E 's/.*link ([0-9.]+) GB.*/\1/')}
fi
echo "machine: core $CORE_GFLOPS GFLOP/s, link $LINK_GBPS GB/s" | tee -a "$log/parallel.txt"
for t in $TOKENS; do
  for mode in $MODES; do
    case $mode in
      none) flags=() ;;
      dp) flags=(--parallel-mode dp --devices "$DEVICES") ;;
      ep-*) flags=(--parallel-mode ep --ep-dispatch "${mode#ep-}" --devices "$DEVICES") ;;
      *) echo "parallel.sh: unknown mode '$mode'" >&2; exit 2 ;;
    esac
    echo "== tokens $t $mode" | tee -a "$log/parallel.txt"
    "$build/bin/moe-bench" --tokens "$t" --hidden "$H" --mlp-dim "$M" --experts "$E" --topk "$K" \
      --bench-pass "$PASS" --iters "$ITERS" --warmup 1 --threads "$THREADS" \
      --core-gflops "$CORE_GFLOPS" --link-gbps "$LINK_GBPS" "${flags[@]}" \
      | tee -a "$log/parallel.txt" | grep -E "^(parallel|model: predicted|comm|RESULT)" || true
  done
done
python3 "$root/bench/parallel_table.py" "$log/parallel.txt" --markdown
