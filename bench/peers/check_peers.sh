#!/usr/bin/env bash
# Checks that the two benchmark peers compute the same y on tiny shapes:
# bench/peers/torch_moe.py and the oneDNN peer binary given as $1 (built
# from bench/, e.g. build/bin/moe-peer-onednn). Builds nothing. Each peer
# also checks itself (--check) against a float64 reference, and
# torch_moe.py's training pass (--pass forward_backward; oneDNN has none)
# checks its gradients against float64 derivatives written out by hand.
# Exits non-zero on any mismatch or failure.
#
#   bench/peers/check_peers.sh build/bin/moe-peer-onednn
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 PATH/TO/moe-peer-onednn" >&2
  exit 2
fi
onednn=$1
if [[ ! -x "$onednn" ]]; then
  echo "check_peers: '$onednn' is not an executable" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Tiny routings: top-K over N(0,1) logits, softmax weights, then a few slots
# made null (ids >= E), and one token sent to the same expert twice.
"$python" - "$work" <<'PY'
import os, sys
import numpy as np
work = sys.argv[1]
for name, T, K, E, nulls in (("a", 16, 2, 4, [(1, 1, 4), (5, 0, 7), (9, 1, 4)]),
                            ("b", 37, 3, 5, [(0, 2, 5), (20, 0, 9), (36, 1, 6)])):
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((T, E)).astype(np.float32)
    ids = np.argsort(-logits, axis=1, kind="stable")[:, :K].astype(np.int32)
    chosen = np.take_along_axis(logits, ids, axis=1).astype(np.float64)
    w = np.exp(chosen - chosen.max(axis=1, keepdims=True))
    w = (w / w.sum(axis=1, keepdims=True)).astype(np.float32)
    for t, k, e in nulls:
        ids[t, k] = e
    ids[3, 1] = ids[3, 0]  # duplicate (token, expert) pair
    d = os.path.join(work, name)
    os.makedirs(d)
    np.save(os.path.join(d, "ids.npy"), ids)
    np.save(os.path.join(d, "weights.npy"), w)
PY

compare() { # a.npy b.npy tolerance label
  "$python" - "$@" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
tol, label = float(sys.argv[3]), sys.argv[4]
if a.shape != b.shape:
    print(f"check_peers: {label}: shapes differ: {a.shape} vs {b.shape}", file=sys.stderr)
    sys.exit(1)
err = float(np.abs(a.astype(np.float64) - b).max() / max(np.abs(a).max(), 1e-30))
ok = err <= tol and np.isfinite(a).all() and np.isfinite(b).all()
print(f"check_peers: {label}: max|torch-onednn|/max|torch| = {err:.3g} "
      f"(tolerance {tol:g}): {'ok' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
PY
}

failed=0
run() { # label command...  (stdout: the PEER line)
  local label=$1; shift
  local out
  if ! out=$("$@" 2>"$work/stderr"); then
    cat "$work/stderr" >&2
    echo "check_peers: $label: FAILED: $*" >&2
    return 1
  fi
  echo "$out"
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

for cfg in "a 4 32 24" "b 5 40 20"; do
  read -r name E H M <<<"$cfg"
  for dtype in f32 bf16; do
    tol=1e-4; [[ $dtype == bf16 ]] && tol=3e-2
    label="routing $name (E=$E H=$H M=$M) $dtype"
    common=(--routing "$work/$name" --hidden "$H" --mlp-dim "$M" --experts "$E"
            --dtype "$dtype" --iters 1 --warmup 0 --check)
    if ! p1=$(run "$label torch" "$python" "$here/torch_moe.py" "${common[@]}" \
                --dump-y "$work/t.npy") ||
       ! p2=$(run "$label onednn" "$onednn" "${common[@]}" --dump-y "$work/o.npy"); then
      failed=1; continue
    fi
    a1=$(field real_assignments "$p1"); a2=$(field real_assignments "$p2")
    if [[ -z "$a1" || "$a1" != "$a2" ]]; then
      echo "check_peers: $label: real_assignments differ: torch '$a1', onednn '$a2'" >&2
      failed=1
    fi
    compare "$work/t.npy" "$work/o.npy" "$tol" "$label" || failed=1
    if ! p3=$(run "$label torch forward_backward" "$python" "$here/torch_moe.py" \
                "${common[@]}" --pass forward_backward); then
      failed=1
    elif [[ $(field pass "$p3") != forward_backward || $(field real_assignments "$p3") != "$a1" ]]; then
      echo "check_peers: $label: unexpected torch forward_backward PEER line: $p3" >&2
      failed=1
    else
      echo "check_peers: $label: torch forward_backward y and gradients: ok"
    fi
  done
done

if [[ $failed -ne 0 ]]; then
  echo "check_peers: FAILED" >&2
  exit 1
fi
echo "check_peers: all ok"
