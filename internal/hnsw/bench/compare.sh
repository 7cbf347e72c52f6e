#!/usr/bin/env bash
# Kairos HNSW against hnswlib and FAISS (C++) on the same vectors, in the same run.
#
#   internal/hnsw/bench/compare.sh [N DIM QUERIES EFLIST]     (defaults: 50000 384 1000 16,24,32,48,64,96,128)
#
# Environment: KAIROS   command that runs the kairos binary (default: build ./cmd/kairos into a temp dir)
#              PYTHON   interpreter with Debian's python3-hnswlib and python3-faiss (default /usr/bin/python3)
#              M, EFC, SEED, REPEAT   graph parameters and timed passes per ef (16, 200, 1, 3)
#              MODEL    a sentence-encoder folder: the vectors are N synthetic passages and QUERIES real
#                       queries embedded with it (DIM is then the model's), not clustered Gaussians
#              ANCHORS  the reference engines, in order (default "hnswlib"; also faiss-flat, faiss-sq; "": none)
#              KAIROS_FLAGS  more `kairos bench ann` flags, e.g. "--mapped --binary" (saved graph rows)
#              RECALL   the recall@10 each engine's first reaching ef is reported at (default 0.98)
#              KEEP     keep the data and the JSON lines in this directory (default: a temp dir, removed)
# Every side uses M and EFC, builds on all cores and searches single-threaded; recall@10 is against
# the exact top-10 that kairos computes and dumps. The table ends with each engine's first ef reaching
# RECALL, and the verdict the HNSW issue asked for: Kairos's QPS there as a share of hnswlib's.
set -euo pipefail
cd "$(dirname "$0")/../../.."
N=${1:-50000} DIM=${2:-384} Q=${3:-1000} EFS=${4:-16,24,32,48,64,96,128}
M=${M:-16} EFC=${EFC:-200} SEED=${SEED:-1} REPEAT=${REPEAT:-3} PYTHON=${PYTHON:-/usr/bin/python3}
ANCHORS=${ANCHORS-hnswlib} RECALL=${RECALL:-0.98}

if [[ -n "${KEEP:-}" ]]; then
  work=$KEEP
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
if [[ -z "${KAIROS:-}" ]]; then
  go build -o "$work/kairos" ./cmd/kairos
  KAIROS="$work/kairos"
fi
for a in $ANCHORS; do
  case $a in
    hnswlib) mod=hnswlib pkg=python3-hnswlib ;;
    faiss-flat|faiss-sq) mod=faiss pkg=python3-faiss ;;
    *) echo "compare.sh: unknown anchor $a (hnswlib, faiss-flat, faiss-sq)" >&2; exit 2 ;;
  esac
  if ! "$PYTHON" -c "import $mod, numpy" 2>/dev/null; then
    echo "compare.sh: $PYTHON cannot import $mod: apt-get install -y $pkg" >&2
    exit 1
  fi
done

data=(--dim "$DIM")
[[ -n "${MODEL:-}" ]] && data=(--model "$MODEL")
echo "== kairos bench ann --n $N ${data[*]} --queries $Q --ef $EFS --m $M --efc $EFC --seed $SEED ${KAIROS_FLAGS:-}" >&2
# shellcheck disable=SC2086 # KAIROS_FLAGS is a list of flags
$KAIROS bench ann --n "$N" "${data[@]}" --queries "$Q" --ef "$EFS" --m "$M" --efc "$EFC" \
  --seed "$SEED" --repeat "$REPEAT" --json --dump "$work/data" ${KAIROS_FLAGS:-} > "$work/kairos.jsonl"
: > "$work/anchors.jsonl"
for a in $ANCHORS; do
  echo "== $a on the same vectors" >&2
  "$PYTHON" internal/hnsw/bench/anchor_bench.py --engine "$a" --ef "$EFS" --repeat "$REPEAT" "$work/data" >> "$work/anchors.jsonl"
done

"$PYTHON" - "$work/kairos.jsonl" "$work/anchors.jsonl" "$RECALL" <<'PY'
import json, sys
rows = {}
for r in map(json.loads, open(sys.argv[1])):
    rows.setdefault("kairos" + ("-" + r["mode"] if r.get("mode") else ""), {})[r["ef"]] = r
for r in map(json.loads, open(sys.argv[2])):
    rows.setdefault(r["engine"], {})[r["ef"]] = r
want = float(sys.argv[3])
some = next(iter(rows["kairos"].values()))
print(f"n {some['n']}, dim {some['dim']}; build seconds: " +
      ", ".join(f"{e} {next(iter(v.values()))['build_seconds']:.2f}" for e, v in rows.items() if not e.startswith("kairos-")))
print(f"{'engine':>20} {'ef':>5} {'recall@10':>10} {'QPS':>10} {'HWM MB':>8}")
for e, v in rows.items():
    for ef in sorted(v):
        r = v[ef]
        print(f"{e:>20} {ef:>5} {r['recall_at_10']:>10.4f} {r['qps']:>10.0f} {r.get('hwm_mb', 0):>8.0f}")
first = {e: next((v[f] for f in sorted(v) if v[f]["recall_at_10"] >= want), None) for e, v in rows.items()}
for e, r in first.items():
    print(f"{e:>20}: " + (f"recall {r['recall_at_10']:.4f} first at ef {r['ef']}, {r['qps']:.0f} QPS" if r
                           else f"recall {want} not reached at any ef"))
fk, fh = first["kairos"], first.get("hnswlib")
if fh is None or fk is None:
    sys.exit(0)
ratio = fk["qps"] / fh["qps"]
print(f"verdict: kairos recall {fk['recall_at_10']:.4f} at ef {fk['ef']} with {fk['qps']:.0f} QPS = "
      f"{100 * ratio:.0f}% of hnswlib ({fh['recall_at_10']:.4f} at ef {fh['ef']}, {fh['qps']:.0f} QPS); "
      f"target >= 50%: {'MET' if ratio >= 0.5 else 'NOT MET'}")
PY
