#!/bin/bash
# Short last call (after call1.sh with PREP=prep-min.sh): the model alone on 100k of the 1M
# passages, then kairos index --device cuda of the 1M in fp16, the default graph.
source /tmp/k/common.sh
nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader -l 1 > $OUT/gpu-f.txt &
TAILN=7
run e16 40 $K bench encode --model $M --device cuda --precision fp16 --input c1m.jsonl --limit 100000
TAILN=14
run i16 $(left 300) $K index --input c1m.jsonl --index /tmp/k/i16 --model $M --device cuda --precision fp16 --log-level info
grep "embedded" $OUT/i16.txt | awk 'NR%4==0' | tail -8
kill %1; awk -F, '{u+=$1; n++} END {print "gpu util mean", u/n, "% over", n, "samples"}' $OUT/gpu-f.txt
