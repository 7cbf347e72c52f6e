#!/usr/bin/env bash
# Kairos HNSW against hnswlib (C++) on the same synthetic data, in the same run.
#
#   internal/hnsw/bench/compare.sh [N DIM QUERIES EFLIST]     (defaults: 50000 384 1000 16,24,32,48,64,96,128)
#
# Environment: KAIROS   command that runs the kairos binary (default: build ./cmd/kairos into a temp dir)
#              PYTHON   interpreter with the Debian python3-hnswlib package (default /usr/bin/python3)
#              M, EFC, SEED, REPEAT   graph parameters and timed passes per ef (16, 200, 1, 3)
# Both sides use M, EFC and SEED, build on all cores and search single-threaded; recall@10 is against
# the exact top-10 that kairos computes and dumps. The table ends with the verdict the issue asks for:
# Kairos's QPS at its first ef reaching recall 0.98, as a share of hnswlib's at its first such ef.
set -euo pipefail
cd "$(dirname "$0")/../../.."
N=${1:-50000} DIM=${2:-384} Q=${3:-1000} EFS=${4:-16,24,32,48,64,96,128}
M=${M:-16} EFC=${EFC:-200} SEED=${SEED:-1} REPEAT=${REPEAT:-3} PYTHON=${PYTHON:-/usr/bin/python3}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z "${KAIROS:-}" ]]; then
  go build -o "$work/kairos" ./cmd/kairos
  KAIROS="$work/kairos"
fi
if ! "$PYTHON" -c 'import hnswlib, numpy' 2>/dev/null; then
  echo "compare.sh: $PYTHON cannot import hnswlib: apt-get install -y python3-hnswlib" >&2
  exit 1
fi

echo "== kairos bench ann --n $N --dim $DIM --queries $Q --ef $EFS --m $M --efc $EFC --seed $SEED" >&2
$KAIROS bench ann --n "$N" --dim "$DIM" --queries "$Q" --ef "$EFS" --m "$M" --efc "$EFC" \
  --seed "$SEED" --repeat "$REPEAT" --json --dump "$work/data" > "$work/kairos.jsonl"
echo "== hnswlib on the same data" >&2
"$PYTHON" internal/hnsw/bench/hnswlib_bench.py --ef "$EFS" --repeat "$REPEAT" "$work/data" > "$work/hnswlib.jsonl"

"$PYTHON" - "$work/kairos.jsonl" "$work/hnswlib.jsonl" <<'PY'
import json, sys
k = {r["ef"]: r for r in map(json.loads, open(sys.argv[1]))}
h = {r["ef"]: r for r in map(json.loads, open(sys.argv[2]))}
any_k, any_h = next(iter(k.values())), next(iter(h.values()))
print(f"n {any_k['n']}, dim {any_k['dim']}; build seconds: kairos {any_k['build_seconds']:.2f}, "
      f"hnswlib {any_h['build_seconds']:.2f}")
print(f"{'ef':>5} | {'kairos recall':>13} {'kairos QPS':>10} | {'hnswlib recall':>14} {'hnswlib QPS':>11} | QPS ratio")
for ef in sorted(k):
    a, b = k[ef], h.get(ef)
    if b is None:
        continue
    print(f"{ef:>5} | {a['recall_at_10']:>13.4f} {a['qps']:>10.0f} | {b['recall_at_10']:>14.4f} "
          f"{b['qps']:>11.0f} | {a['qps'] / b['qps']:>8.2f}")
first = lambda rows: next((rows[e] for e in sorted(rows) if rows[e]["recall_at_10"] >= 0.98), None)
fk, fh = first(k), first(h)
if fk is None or fh is None:
    print("verdict: recall 0.98 not reached by " + ("kairos" if fk is None else "hnswlib") + " at any ef")
    sys.exit(0)
ratio = fk["qps"] / fh["qps"]
print(f"verdict: kairos recall {fk['recall_at_10']:.4f} at ef {fk['ef']} with {fk['qps']:.0f} QPS = "
      f"{100 * ratio:.0f}% of hnswlib ({fh['recall_at_10']:.4f} at ef {fh['ef']}, {fh['qps']:.0f} QPS); "
      f"target >= 50%: {'MET' if ratio >= 0.5 else 'NOT MET'}")
PY
