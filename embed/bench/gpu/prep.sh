#!/bin/bash
# Runs in the background on the device machine (setsid): models and corpora for the GPU runs.
set -x
cd /tmp/k
python3 gen_bert.py models/minilm-l6/model.onnx 6 384 12 1536 none n
python3 gen_bert.py models/ce-l12/model.onnx 12 384 12 1536 cls n
(cd models && sha256sum -c ../shared.sha256)
mkdir -p models/minilm-l6/onnx models/ce-l12/onnx
python3 to_fp16.py models/minilm-l6/model.onnx models/minilm-l6/onnx/model_fp16.onnx --keep-io-types &
python3 to_fp16.py models/ce-l12/model.onnx models/ce-l12/onnx/model_fp16.onnx --keep-io-types &
./kairos bench corpus --passages 1m --out /tmp/k/c1m.jsonl --shared /tmp/k/shared
head -n 200000 /tmp/k/c1m.jsonl > /tmp/k/c200k.jsonl
wait
ls -la /tmp/k /tmp/k/models/*
echo PREP-DONE
