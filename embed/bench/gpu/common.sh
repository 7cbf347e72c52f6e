# Sourced by the bench calls: assembles the CUDA provider once, sets the loader path, waits for
# prep.sh, and defines run NAME LIMIT CMD... (output in $OUT/NAME.txt, tail printed).
cd /tmp/k
if [ ! -s /tmp/ort/libonnxruntime_providers_cuda.so ]; then
  cat /tmp/ort/cuda.xz.part.* | xz -T0 -d > /tmp/ort/libonnxruntime_providers_cuda.so.part &&
    mv /tmp/ort/libonnxruntime_providers_cuda.so.part /tmp/ort/libonnxruntime_providers_cuda.so
fi
source /tmp/k/env.sh
for i in $(seq 150); do grep -q PREP-DONE prep.log && break; sleep 2; done
grep -q PREP-DONE prep.log || { echo "prep not done"; tail -20 prep.log; }
K=./kairos; M=models/minilm-l6; SCI=shared/data/beir-scifact/corpus.jsonl; T0=$(date +%s)
run() { local name=$1 lim=$2; shift 2; echo "== $name: ${*:2}"; local t0=$(date +%s%N); timeout $lim "$@" > $OUT/$name.txt 2>&1; echo "rc=$? wall=$(( ($(date +%s%N) - t0) / 1000000 ))ms" | tee -a $OUT/$name.txt; grep -v "ETA\|^read \|^embed" $OUT/$name.txt | tail -${TAILN:-12}; }
left() { echo $(( ${1:-560} - ($(date +%s) - T0) )); }
