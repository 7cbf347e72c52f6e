#!/bin/bash
# GPU measurements of the encoder on the device machine (one H200, no network, 64 MiB carried
# per call), in one script whose first argument names the step.
#
# Here, from the repository root: bash embed/bench/gpu/gpu.sh stage
#   writes two git-ignored folders (list them in .git/info/exclude): .gpu/ (ONNX Runtime's GPU
#   libraries, ../shared/gpu/prepare.sh) and .devrun/ (the kairos binary, xz-compressed; the
#   tokenizers and configs of the models, which prep regenerates there with gen_bert.py,
#   byte-identical to ../shared; the shared texts bench corpus learns from; this script).
# Then, with the device tool, back to back (a machine idle for 30 s is given back; if it is
# taken back between two calls, start again from call1):
#   run "bash .devrun/gpu.sh call1"                          carry .devrun (starts prep there;
#                                                            PREP=min for the short set)
#   run "mkdir -p /tmp/ort && cp .gpu/chunk-N/* /tmp/ort/"   carry .gpu/chunk-N, N = 1..3
#   run "bash /tmp/k/gpu.sh bench", then "bash /tmp/k/gpu.sh bench1m"
#   (after PREP=min: "bash /tmp/k/gpu.sh final")
# (.devrun holds chunk-0's core libraries xz-compressed, 28 MB to 8, and the small last part.)
# Each bench step prints its tables and leaves its logs in $OUT.
#
# source embed/bench/gpu/gpu.sh env   sets the loader path --device cuda needs (below).

# env: the ONNX Runtime GPU libraries and CUDA 13 / cuDNN 9 on the loader path.
gpu_env() {
  export KAIROS_ORT_CUDA_LIB=/tmp/ort/libonnxruntime_providers_cuda.so
  export KAIROS_ORT_LIB=/tmp/ort/libonnxruntime.so
  local libs=/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu so d
  for so in libcudnn.so.9 libcublasLt.so.13 libcufft.so.12 libcurand.so.10 libcudart.so.13; do
    d=$(ldconfig -p | awk -v s="$so" '$1==s {print $NF; exit}')
    [ -z "$d" ] && d=$(find / -name "$so" -not -path '/proc/*' 2>/dev/null | head -1)
    [ -n "$d" ] && libs="$libs:$(dirname "$d")"
  done
  export LD_LIBRARY_PATH=$libs
}

# stage: builds .gpu and .devrun here (see the top of this file).
gpu_stage() {
  set -euo pipefail
  local S=${SHARED:-../shared}
  [ -d .gpu/chunk-0 ] || bash "$S/gpu/prepare.sh" .gpu
  rm -rf .devrun && mkdir -p .devrun/shared/data/beir-scifact .devrun/shared/data/squad-v1.1-dev \
    .devrun/shared/data/mediawiki-xml-gensim .devrun/models/minilm-l6 .devrun/models/ce-l12 .devrun/models/ce-tinybert-l2
  cp "$S/data/beir-scifact/corpus.jsonl" .devrun/shared/data/beir-scifact/
  cp "$S/data/squad-v1.1-dev/v1.1-passages.jsonl" .devrun/shared/data/squad-v1.1-dev/
  cp "$S"/data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 .devrun/shared/data/mediawiki-xml-gensim/
  (cd "$S/models/synthetic/minilm-l6" && cp -r $(ls | grep -v onnx) "$OLDPWD/.devrun/models/minilm-l6/")
  (cd "$S/models/synthetic/ce-tinybert-l2" && cp $(ls | grep -v onnx) "$OLDPWD/.devrun/models/ce-tinybert-l2/")
  cp "$S"/models/tokenizers/ms-marco-MiniLM-L12-v2/* .devrun/models/ce-l12/
  cp "$S/models/gen_bert.py" embed/testdata/to_fp16.py embed/bench/gpu/gpu.sh .devrun/
  (cd "$S/models/synthetic" && sha256sum minilm-l6/model.onnx) > .devrun/shared.sha256
  go build -o bin/kairos ./cmd/kairos && xz -T0 -6 -c bin/kairos > .devrun/kairos.xz
  tar -C .gpu/chunk-0 -cf - . | xz -T0 -6 > .devrun/ort-core.tar.xz
  cp .gpu/chunk-4/* .devrun/
  du -sh .devrun .gpu/chunk-*
}

# call1 (device call 1): the core libraries and the last CUDA provider part (in .devrun), the
# binary, and prep started in the background (models, corpora) while the other parts travel.
gpu_call1() {
  mkdir -p /tmp/ort /tmp/k && cp -r .devrun/* /tmp/k/ && cd /tmp/k && xz -d kairos.xz && chmod +x kairos &&
    xz -dc ort-core.tar.xz | tar -C /tmp/ort -xf - && mv cuda.xz.part.* /tmp/ort/ && ls -la /tmp/ort
  ./kairos version | head -3; nproc; free -g | head -2; nvidia-smi -L; df -h /tmp | tail -1
  setsid nohup bash /tmp/k/gpu.sh prep ${PREP:-} > /tmp/k/prep.log 2>&1 < /dev/null &
  sleep 1; echo started
}

# prep [min] (in the background, setsid): the MiniLM-L6 shape (fp32, fp16), the 1M corpus and,
# without min, the MiniLM-L12 cross-encoder shape and the 200k corpus.
gpu_prep() {
  set -x
  cd /tmp/k
  python3 gen_bert.py models/minilm-l6/model.onnx 6 384 12 1536 none n
  if [ "${1:-}" != min ]; then
    python3 gen_bert.py models/ce-l12/model.onnx 12 384 12 1536 cls n
    (cd models && sha256sum -c ../shared.sha256)
    mkdir -p models/ce-l12/onnx
    python3 to_fp16.py models/ce-l12/model.onnx models/ce-l12/onnx/model_fp16.onnx --keep-io-types &
  fi
  mkdir -p models/minilm-l6/onnx
  python3 to_fp16.py models/minilm-l6/model.onnx models/minilm-l6/onnx/model_fp16.onnx --keep-io-types &
  ./kairos bench corpus --passages 1m --out /tmp/k/c1m.jsonl --shared /tmp/k/shared
  [ "${1:-}" = min ] || head -n 200000 /tmp/k/c1m.jsonl > /tmp/k/c200k.jsonl
  wait
  ls -la /tmp/k /tmp/k/models/*
  echo PREP-DONE
}

# common (every bench step): assembles the CUDA provider once, sets the loader path, waits for
# prep, and defines run NAME LIMIT CMD... (output in $OUT/NAME.txt, tail printed).
gpu_common() {
  cd /tmp/k
  if [ ! -s /tmp/ort/libonnxruntime_providers_cuda.so ]; then
    cat /tmp/ort/cuda.xz.part.* | xz -T0 -d > /tmp/ort/libonnxruntime_providers_cuda.so.part &&
      mv /tmp/ort/libonnxruntime_providers_cuda.so.part /tmp/ort/libonnxruntime_providers_cuda.so
  fi
  gpu_env
  for _ in $(seq 150); do grep -q PREP-DONE prep.log && break; sleep 2; done
  grep -q PREP-DONE prep.log || { echo "prep not done"; tail -20 prep.log; }
  K=./kairos; M=models/minilm-l6; SCI=shared/data/beir-scifact/corpus.jsonl; T0=$(date +%s)
}
run() { local name=$1 lim=$2; shift 2; echo "== $name: ${*:2}"; local t0; t0=$(date +%s%N); timeout "$lim" "$@" > "$OUT/$name.txt" 2>&1; echo "rc=$? wall=$(( ($(date +%s%N) - t0) / 1000000 ))ms" | tee -a "$OUT/$name.txt"; grep -v "ETA\|^read \|^embed" "$OUT/$name.txt" | tail -"${TAILN:-12}"; }
left() { echo $(( ${1:-560} - ($(date +%s) - T0) )); }
gpu_util() { awk -F, '{u+=$1; n++} END {print "gpu util mean", u/n, "% over", n, "samples"}' "$1"; }

# bench (call A): the encoder at 200k passages by stage, pooling in the graph against the host,
# calls in flight, batch and sort window; agreement with the CPU and the cross-encoder on
# SciFact; kairos index --device cuda of SciFact in fp16 and fp32.
gpu_bench() {
  gpu_common
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -l 1 > "$OUT/gpu-a.txt" &
  local E="$K bench encode --model $M --device cuda --input c200k.jsonl"
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
  run idx-sci16 "$(left 560)" $K index --input $SCI --index /tmp/k/sci16 --model $M --device cuda --precision fp16
  run idx-sci32 "$(left 570)" $K index --input $SCI --index /tmp/k/sci32 --model $M --device cuda --precision fp32
  run search-sci16 30 $K search --index /tmp/k/sci16 --model $M --mode dense -k 3 "cerebral white matter diffusion"
  kill %1; gpu_util "$OUT/gpu-a.txt"
}

# bench1m (call B): kairos index --device cuda of 1M passages in fp16 and fp32, each beside the
# model's standalone rate on the first 200k of the same passages in the same call, and once
# with a cheaper graph (efConstruction 64) to show what bounds the build. If a build is still
# running 60 s after its last vector was embedded, its goroutines are dumped (SIGQUIT) to name
# the single-threaded tail.
gpu_bench1m() {
  gpu_common
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -l 1 > "$OUT/gpu-b.txt" &
  (while sleep 5; do echo "$(date +%T) $(cat /proc/loadavg) $(ps -C kairos -o rss= | head -1)"; done) > "$OUT/load-b.txt" &
  watchtail() { while sleep 2; do grep -q "embedded 1000000 (done)" "$1" 2>/dev/null && break; done; sleep 60
    pgrep -x kairos >/dev/null && { echo "$(date +%T) tail over 60 s: SIGQUIT" >> "$OUT/load-b.txt"; pkill -QUIT -x kairos; }; }
  idx() { local name=$1; shift; watchtail "$OUT/$name.txt" & local w=$!; TAILN=7 run "$name" "$(left 585)" $K index --input c1m.jsonl --index "/tmp/k/$name" --model $M --device cuda "$@"; kill $w 2>/dev/null
    grep "embedded" "$OUT/$name.txt" | awk 'NR%4==0' | tail -8; grep -m3 -A12 "^goroutine .*running" "$OUT/$name.txt" | head -60; rm -rf "/tmp/k/$name"; }
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
  kill %1 %2; gpu_util "$OUT/gpu-b.txt"
}

# final (a short last call after call1 with PREP=min): the model alone on 100k of the 1M
# passages, then kairos index --device cuda of the 1M in fp16, the default graph.
gpu_final() {
  gpu_common
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader -l 1 > "$OUT/gpu-f.txt" &
  TAILN=7
  run e16 40 $K bench encode --model $M --device cuda --precision fp16 --input c1m.jsonl --limit 100000
  TAILN=14
  run i16 "$(left 300)" $K index --input c1m.jsonl --index /tmp/k/i16 --model $M --device cuda --precision fp16 --log-level info
  grep "embedded" "$OUT/i16.txt" | awk 'NR%4==0' | tail -8
  kill %1; gpu_util "$OUT/gpu-f.txt"
}

case "${1:-}" in
env) gpu_env ;; # sourced: sets the caller's environment
stage | call1 | prep | bench | bench1m | final) step=$1; shift; "gpu_$step" "$@" ;;
*) echo "usage: gpu.sh stage|call1|prep [min]|bench|bench1m|final, or: source gpu.sh env" >&2; return 2 2>/dev/null || exit 2 ;;
esac
