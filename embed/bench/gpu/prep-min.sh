#!/bin/bash
# prep.sh without the cross-encoder: the MiniLM-L6 shape (fp32, fp16) and the 1M corpus, for a
# short last lease (bench-final.sh).
set -x
cd /tmp/k
python3 gen_bert.py models/minilm-l6/model.onnx 6 384 12 1536 none n
mkdir -p models/minilm-l6/onnx
python3 to_fp16.py models/minilm-l6/model.onnx models/minilm-l6/onnx/model_fp16.onnx --keep-io-types &
./kairos bench corpus --passages 1m --out /tmp/k/c1m.jsonl --shared /tmp/k/shared
wait
echo PREP-DONE
