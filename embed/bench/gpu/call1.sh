#!/bin/bash
# Device call 1 (see stage.sh): the core libraries and the last CUDA provider part (in .devrun),
# the binary, and prep.sh started in the background (models, corpora) while the other parts travel.
mkdir -p /tmp/ort /tmp/k && cp -r .devrun/* /tmp/k/ && cd /tmp/k && xz -d kairos.xz && chmod +x kairos &&
  xz -dc ort-core.tar.xz | tar -C /tmp/ort -xf - && mv cuda.xz.part.* /tmp/ort/ && ls -la /tmp/ort
./kairos version | head -3; nproc; free -g | head -2; nvidia-smi -L; df -h /tmp | tail -1
setsid nohup bash /tmp/k/${PREP:-prep.sh} > /tmp/k/prep.log 2>&1 < /dev/null &
sleep 1; echo started
