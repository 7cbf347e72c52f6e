#!/bin/bash
# Bench call B (see stage.sh): kairos index --device cuda of 1M passages in fp16 and fp32, each
# beside the model's standalone rate on the first 200k of the same passages in the same call,
# and once with a cheaper graph (efConstruction 64) to show what bounds the build. If a build
# is still running 60 s after its last vector was embedded, its goroutines are dumped
# (SIGQUIT) to name the single-threaded tail.
source /tmp/k/common.sh
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -l 1 > $OUT/gpu-b.txt &
(while sleep 5; do echo "$(date +%T) $(cat /proc/loadavg) $(ps -C kairos -o rss= | head -1)"; done) > $OUT/load-b.txt &
watchtail() { while sleep 2; do grep -q "embedded 1000000 (done)" $1 2>/dev/null && break; done; sleep 60
  pgrep -x kairos >/dev/null && { echo "$(date +%T) tail over 60 s: SIGQUIT" >> $OUT/load-b.txt; pkill -QUIT -x kairos; }; }
idx() { local name=$1; shift; watchtail $OUT/$name.txt & local w=$!; TAILN=7 run $name $(left 585) $K index --input c1m.jsonl --index /tmp/k/$name --model $M --device cuda "$@"; kill $w 2>/dev/null
  grep "embedded" $OUT/$name.txt | awk 'NR%4==0' | tail -8; grep -m3 -A12 "^goroutine .*running" $OUT/$name.txt | head -60; rm -rf /tmp/k/$name; }
TAILN=7
run e16 60 $K bench encode --model $M --device cuda --precision fp16 --input c1m.jsonl --limit 200000
idx i16 --precision fp16
idx i16-efc64 --precision fp16 --hnsw-ef-construction 64
run e32 60 $K bench encode --model $M --device cuda --precision fp32 --input c1m.jsonl --limit 200000
idx i32 --precision fp32
TAILN=6
run sci16 60 $K index --input $SCI --index /tmp/k/sci16 --model $M --device cuda --precision fp16
run sci32 60 $K index --input $SCI --index /tmp/k/sci32 --model $M --device cuda --precision fp32
run search16 30 $K search --index /tmp/k/sci16 --model $M --device cuda --precision fp16 --mode dense -k 3 "cerebral white matter diffusion"
kill %1 %2; awk -F, '{u+=$1; n++} END {print "gpu util mean", u/n, "% over", n, "samples"}' $OUT/gpu-b.txt
