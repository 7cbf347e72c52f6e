#!/bin/bash
# Stages a GPU measurement for the device machine (one H200, no network, 64 MiB per call), run
# here from the repository root. It writes two git-ignored folders (list them in
# .git/info/exclude): .gpu/ (ONNX Runtime's GPU libraries, ../shared/gpu/prepare.sh) and
# .devrun/ (the kairos binary, xz-compressed; the tokenizers and configs of the models, which
# prep.sh regenerates there with gen_bert.py, byte-identical to ../shared; the shared texts
# bench corpus learns from; these scripts). Then, with the device tool, back to back (a machine
# idle for 30 s is given back):
#   run "bash .devrun/call1.sh"          carry .devrun (starts prep.sh there)
#   run "mkdir -p /tmp/ort && cp .gpu/chunk-N/* /tmp/ort/"  carry .gpu/chunk-N, N = 1..3
# (.devrun holds chunk-0's core libraries xz-compressed, 28 MB to 8, and the small last part.)
#   run "bash /tmp/k/bench.sh", then "bash /tmp/k/bench1m.sh" (no carry; both source common.sh)
# bench.sh prints the tables and leaves its logs in $OUT.
set -euo pipefail
S=${SHARED:-../shared}
[ -d .gpu/chunk-0 ] || bash "$S/gpu/prepare.sh" .gpu
rm -rf .devrun && mkdir -p .devrun/shared/data/beir-scifact .devrun/shared/data/squad-v1.1-dev \
  .devrun/shared/data/mediawiki-xml-gensim .devrun/models/minilm-l6 .devrun/models/ce-l12 .devrun/models/ce-tinybert-l2
cp "$S/data/beir-scifact/corpus.jsonl" .devrun/shared/data/beir-scifact/
cp "$S/data/squad-v1.1-dev/v1.1-passages.jsonl" .devrun/shared/data/squad-v1.1-dev/
cp "$S"/data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 .devrun/shared/data/mediawiki-xml-gensim/
(cd "$S/models/synthetic/minilm-l6" && cp -r $(ls | grep -v onnx) "$OLDPWD/.devrun/models/minilm-l6/")
(cd "$S/models/synthetic/ce-tinybert-l2" && cp $(ls | grep -v onnx) "$OLDPWD/.devrun/models/ce-tinybert-l2/")
cp "$S"/models/tokenizers/ms-marco-MiniLM-L12-v2/* .devrun/models/ce-l12/
cp "$S/models/gen_bert.py" embed/testdata/to_fp16.py embed/bench/gpu/*.sh .devrun/
(cd "$S/models/synthetic" && sha256sum minilm-l6/model.onnx) > .devrun/shared.sha256
go build -o bin/kairos ./cmd/kairos && xz -T0 -6 -c bin/kairos > .devrun/kairos.xz
tar -C .gpu/chunk-0 -cf - . | xz -T0 -6 > .devrun/ort-core.tar.xz
cp .gpu/chunk-4/* .devrun/
du -sh .devrun .gpu/chunk-*
