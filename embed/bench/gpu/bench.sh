#!/bin/bash
# Bench call A (see stage.sh): the encoder at 200k passages by stage, pooling in the graph
# against the host, calls in flight, batch and sort window; agreement with the CPU and the
# cross-encoder on SciFact; kairos index --device cuda of SciFact in fp16 and fp32.
source /tmp/k/common.sh
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -l 1 > $OUT/gpu-a.txt &
E="$K bench encode --model $M --device cuda --input c200k.jsonl"
TAILN=9
run e16-graph 90 $E --precision fp16
run e16-host 90 $E --precision fp16 --pool-on host
run e16-if2 90 $E --precision fp16 --in-flight 2
run e16-if3 90 $E --precision fp16 --in-flight 3
run e16-b1024 90 $E --precision fp16 --batch 1024
run e32-graph 90 $E --precision fp32
run e32-host 90 $E --precision fp32 --pool-on host
TAILN=14
run sci-agree 120 $K bench encode --model $M --device cuda --precision fp16 --input $SCI --compare-device cpu --compare-precision fp32 --compare-n 1000 --cross-model models/ce-l12 --cross-pairs 20000
run sci-agree32 90 $K bench encode --model $M --device cuda --precision fp32 --input $SCI --limit 2000 --compare-device cpu --compare-n 1000 --cross-model models/ce-l12 --cross-pairs 20000
TAILN=8
run idx-sci16 $(left 560) $K index --input $SCI --index /tmp/k/sci16 --model $M --device cuda --precision fp16
run idx-sci32 $(left 570) $K index --input $SCI --index /tmp/k/sci32 --model $M --device cuda --precision fp32
run search-sci16 30 $K search --index /tmp/k/sci16 --model $M --mode dense -k 3 "cerebral white matter diffusion"
kill %1; awk -F, '{u+=$1; n++} END {print "gpu util mean", u/n, "% over", n, "samples"}' $OUT/gpu-a.txt
