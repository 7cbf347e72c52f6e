#!/usr/bin/env bash
# Embedding throughput: `kairos embed --backend ort` against onnxruntime-node on the same model,
# the same token ids and the same threads, in the same run. Called by `make bench`.
#
#   (a) 320 texts of exactly 149 tokens (SciFact abstracts cut at a word boundary), batch 32:
#       no padding on either side, so this compares raw inference overhead (target >= 1.0x).
#   (b) SciFact passages from `kairos passages` (<= 120 words, real length mix): Kairos sorts by
#       length before batching, Node batches in input order and pads (target >= 1.3x).
#   (c) the pure-Go backend on the first GO_N texts of (a).
#
# Environment: MODEL (default ../shared/models/synthetic/minilm-l6), SHARED (../shared),
# B_LIMIT (passages in (b), 0 = all 13,357), GO_N (default 32), THREADS (default nproc),
# BATCH (32), REPEAT (runs per side, default 2, best kept; order kairos, node, node, kairos, ...
# so drifting machine load hits both sides alike), KAIROS (a built kairos binary; default:
# built here), BENCH_DIR (work dir).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SHARED="${SHARED:-$ROOT/../shared}"
MODEL="${MODEL:-$SHARED/models/synthetic/minilm-l6}"
B_LIMIT="${B_LIMIT:-0}"
GO_N="${GO_N:-32}"
THREADS="${THREADS:-$(nproc)}"
BATCH="${BATCH:-32}"
REPEAT="${REPEAT:-2}"
WORK="${BENCH_DIR:-$(mktemp -d /tmp/kairos-embed-bench.XXXXXX)}"
NODE_DIR="$HOME/.cache/kairos/node-bench"
ORT_LIB="${KAIROS_ORT_LIB:-$HOME/.cache/kairos/onnxruntime-1.29.0/libonnxruntime.so}"
mkdir -p "$WORK"

[ -f "$ORT_LIB" ] || { echo "bench: ONNX Runtime library $ORT_LIB missing: run make ort" >&2; exit 1; }
[ -f "$MODEL/model.onnx" ] || { echo "bench: model $MODEL missing (../shared must sit beside the repo)" >&2; exit 1; }
if [ ! -d "$NODE_DIR/node_modules/onnxruntime-node" ]; then
  mkdir -p "$NODE_DIR"
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --ignore-scripts onnxruntime-node@1.27.0 >&2)
fi

cd "$ROOT"
if [ -z "${KAIROS:-}" ]; then
  KAIROS="$WORK/kairos"
  go build -o "$KAIROS" ./cmd/kairos
fi

echo "bench: preparing inputs in $WORK" >&2
"$KAIROS" passages --input "$SHARED/data/beir-scifact/corpus.jsonl" >"$WORK/passages.jsonl" 2>"$WORK/passages.log"
go run ./embed/bench/prep --model "$MODEL" --scifact "$SHARED/data/beir-scifact/corpus.jsonl" \
  --passages "$WORK/passages.jsonl" --out "$WORK" --b-limit "$B_LIMIT" 2>"$WORK/prep.log"
cat "$WORK/prep.log" >&2

# kairos_rate SET BACKEND INPUT -> "texts/s tokens/s"
kairos_rate() {
  nice "$KAIROS" embed --model "$MODEL" --backend "$2" --threads "$THREADS" --batch "$BATCH" \
    --input "$3" --output "$WORK/$1.$2.vectors.jsonl" 2>"$WORK/$1.$2.log"
  sed -n 's/^embedded .*: \([0-9.]*\) texts\/s, \([0-9.]*\) tokens\/s.*/\1 \2/p' "$WORK/$1.$2.log"
}
# node_rate SET -> "texts/s tokens/s"
node_rate() {
  NODE_PATH="$NODE_DIR/node_modules" nice node "$ROOT/embed/bench/ort_node.js" "$MODEL/model.onnx" \
    "$WORK/$1.ids.json" "$THREADS" "$BATCH" >"$WORK/$1.node.json"
  node -e 'const r=require(process.argv[1]); console.log(r.texts_per_s.toFixed(1), r.tokens_per_s.toFixed(0))' "$WORK/$1.node.json"
}

# best SET -> sets globals K, KT, N, NT to the best texts/s (and its tokens/s) of REPEAT runs
best() {
  K=0 KT=0 N=0 NT=0
  local i r t
  for ((i = 0; i < REPEAT; i++)); do
    for side in $([ $((i % 2)) -eq 0 ] && echo "kairos node" || echo "node kairos"); do
      if [ "$side" = kairos ]; then read -r r t < <(kairos_rate "$1" ort "$WORK/$1.jsonl"); else read -r r t < <(node_rate "$1"); fi
      [ -n "$r" ] || { echo "bench: $1 $side run failed, logs in $WORK" >&2; exit 1; }
      echo "bench: $1 run $((i + 1)) $side: $r texts/s" >&2
      if [ "$side" = kairos ]; then
        if awk -v a="$r" -v b="$K" 'BEGIN { exit !(a > b) }'; then K=$r KT=$t; fi
      elif awk -v a="$r" -v b="$N" 'BEGIN { exit !(a > b) }'; then N=$r NT=$t; fi
    done
  done
}

head -n "$GO_N" "$WORK/a.jsonl" >"$WORK/a_go.jsonl"
best a
ka=$K kat=$KT na=$N nat=$NT
best b
kb=$K kbt=$KT nb=$N nbt=$NT
read -r ga gat < <(kairos_rate a_go go "$WORK/a_go.jsonl")

ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.2fx", x / y }'; }
printf '\nembedding throughput, model %s, %s threads, batch %s, best of %s (texts/s, tokens/s)\n' "$(basename "$MODEL")" "$THREADS" "$BATCH" "$REPEAT"
printf '%-44s %10s %10s %10s %10s %8s\n' set kairos-ort tok/s node-ort tok/s ratio
printf '%-44s %10s %10s %10s %10s %8s\n' "(a) 320 x 149 tokens" "$ka" "$kat" "$na" "$nat" "$(ratio "$ka" "$na")"
printf '%-44s %10s %10s %10s %10s %8s\n' "(b) SciFact passages ($(wc -l <"$WORK/b.jsonl"))" "$kb" "$kbt" "$nb" "$nbt" "$(ratio "$kb" "$nb")"
printf '%-44s %10s %10s\n' "(c) go backend, first $GO_N of (a)" "$ga" "$gat"
echo "logs and vectors: $WORK"
