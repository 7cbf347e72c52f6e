#!/bin/bash
# Device call 1 (see stage.sh): the first library chunk, the binary, and prep.sh started in the background.
mkdir -p /tmp/ort /tmp/k && cp .gpu/chunk-0/* /tmp/ort/ && cp -r .devrun/* /tmp/k/ && cd /tmp/k && xz -d kairos.xz && chmod +x kairos
./kairos version; nproc; free -g | head -2; nvidia-smi -L; df -h /tmp | tail -1
which xz python3; python3 -c "import onnx, numpy; print(onnx.__version__, numpy.__version__)"
setsid nohup bash /tmp/k/prep.sh > /tmp/k/prep.log 2>&1 < /dev/null &
sleep 2; echo started
