#!/bin/bash
# The last device call (see stage.sh): assembles the CUDA provider, then measures the encoder by
# stage at 200k passages (fp16, fp32), its agreement with the CPU and the cross-encoder on
# SciFact, and kairos index --device cuda of 1M passages in the time left (GPU use sampled).
cd /tmp/k
cp $OLDPWD/.gpu/chunk-4/* /tmp/ort/ 2>/dev/null
cat /tmp/ort/cuda.xz.part.* | xz -T0 -d > /tmp/ort/libonnxruntime_providers_cuda.so
source /tmp/k/env.sh
for i in $(seq 120); do grep -q PREP-DONE prep.log && break; sleep 2; done
K=./kairos; M=models/minilm-l6; SCI=shared/data/beir-scifact/corpus.jsonl; T0=$(date +%s)
run() { local name=$1 lim=$2; shift 2; echo "== $name: $*"; local t0=$(date +%s%N); timeout $lim "$@" > $OUT/$name.txt 2>&1; echo "rc=$? wall=$(( ($(date +%s%N) - t0) / 1000000 ))ms" | tee -a $OUT/$name.txt; grep -v "^read .*ETA" $OUT/$name.txt | tail -14; }
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -l 2 > $OUT/gpu.txt &
run enc-200k-fp16 120 $K bench encode --model $M --device cuda --precision fp16 --input c200k.jsonl
run enc-200k-fp32 120 $K bench encode --model $M --device cuda --precision fp32 --input c200k.jsonl
run enc-sci-fp16 120 $K bench encode --model $M --device cuda --precision fp16 --input $SCI --compare-device cpu --compare-precision fp32 --compare-n 1000 --cross-model models/ce-l12 --cross-pairs 20000 --compare-n 1000 --compare-precision fp32
left=$(( 560 - ($(date +%s) - T0) )); echo "left for 1M: ${left}s"
run idx-1m-fp16 $left $K index --input c1m.jsonl --index /tmp/k/i1m16 --model $M --device cuda --precision fp16 --lexical postings
grep "^read" $OUT/idx-1m-fp16.txt | awk 'NR%6==0' | tail -30
kill %1; awk -F, '{u+=$1; n++} END {print "gpu util mean", u/n, "% over", n, "samples"}' $OUT/gpu.txt
