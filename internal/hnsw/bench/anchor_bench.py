#!/usr/bin/env python3
"""ANN anchors for `kairos bench ann`: hnswlib and FAISS on the same vectors.

Reads the directory written by `kairos bench ann --dump DIR` (base.f32, queries.f32, gt.i32,
meta.json), builds one reference index on the SAME vectors with the same M and efConstruction
(inner product: the vectors are unit length, so this is cosine), and prints one JSON line per ef
in the format of `kairos bench ann --json`, with the engine named:
  {"engine", "ef", "recall_at_10", "qps", "build_seconds", "n", "dim", "hwm_mb"}
Engines (--engine):
  hnswlib     hnswlib's HNSW, float32 vectors (the seed is meta.json's)
  faiss-flat  FAISS IndexHNSWFlat, float32 vectors
  faiss-sq    FAISS IndexHNSWSQ with 8-bit scalar quantization (trained on the base set), the
              analogue of Kairos's int8 codes; FAISS does not rescore with floats
The build uses all cores (as Kairos does); queries run on one thread in one batched call, each
library's fastest single-thread path (no per-query Python overhead); the best of --repeat passes
is kept, as Kairos does. hwm_mb is this process's peak resident memory after the build and the
searches (the dump is loaded too: n*dim*4 bytes of it are the input, not the index).

Needs the Debian packages python3-hnswlib and python3-faiss; run it with /usr/bin/python3.
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np

ENGINES = ("hnswlib", "faiss-flat", "faiss-sq")


def load(d):
    """The dump: base [n, dim], queries [nq, dim], gt [nq, k] and meta.json."""
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    n, dim, nq, k = meta["n"], meta["dim"], meta["queries"], meta["k"]
    base = np.fromfile(os.path.join(d, "base.f32"), dtype="<f4")
    queries = np.fromfile(os.path.join(d, "queries.f32"), dtype="<f4")
    gt = np.fromfile(os.path.join(d, "gt.i32"), dtype="<i4")
    if base.size != n * dim or queries.size != nq * dim or gt.size != nq * k:
        sys.exit(f"anchor_bench: {d}: file sizes do not match meta.json "
                 f"(base {base.size}, queries {queries.size}, gt {gt.size} values)")
    return meta, base.reshape(n, dim), queries.reshape(nq, dim), gt.reshape(nq, k)


class HNSWLib:
    def __init__(self, meta, threads):
        import hnswlib
        self.lib, self.threads = hnswlib, threads
        self.index = hnswlib.Index(space="ip", dim=meta["dim"])
        self.index.init_index(max_elements=meta["n"], ef_construction=meta["efc"], M=meta["m"],
                              random_seed=meta["seed"])

    def build(self, base):
        self.index.add_items(base, np.arange(len(base)), num_threads=self.threads)
        self.index.set_num_threads(1)

    def search(self, queries, k, ef):
        self.index.set_ef(max(ef, k))
        labels, _ = self.index.knn_query(queries, k=k, num_threads=1)
        return labels


class FAISS:
    def __init__(self, meta, threads, sq):
        import faiss
        self.faiss, self.threads = faiss, threads
        dim, m = meta["dim"], meta["m"]
        if sq:
            self.index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT)
        else:
            self.index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = meta["efc"]

    def build(self, base):
        if self.threads > 0:
            self.faiss.omp_set_num_threads(self.threads)
        if not self.index.is_trained:
            self.index.train(base)
        self.index.add(base)
        self.faiss.omp_set_num_threads(1)

    def search(self, queries, k, ef):
        self.index.hnsw.efSearch = max(ef, k)
        _, labels = self.index.search(queries, k)
        return labels


def open_engine(name, meta, threads):
    try:
        if name == "hnswlib":
            return HNSWLib(meta, threads)
        return FAISS(meta, threads, sq=name == "faiss-sq")
    except ImportError as e:
        pkg = "python3-hnswlib" if name == "hnswlib" else "python3-faiss"
        sys.exit(f"anchor_bench: {name}: {e}: apt-get install -y {pkg}, and run with /usr/bin/python3")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="directory written by kairos bench ann --dump")
    ap.add_argument("--engine", choices=ENGINES, default="hnswlib", help="reference index (default hnswlib)")
    ap.add_argument("--ef", help="comma-separated ef list (default: the one in meta.json)")
    ap.add_argument("--threads", type=int, default=-1, help="build threads (-1: all cores)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed passes per ef, best QPS kept (as kairos bench ann --repeat)")
    args = ap.parse_args()

    meta, base, queries, gt = load(args.dir)
    n, dim, nq, k = meta["n"], meta["dim"], meta["queries"], meta["k"]
    efs = [int(e) for e in args.ef.split(",")] if args.ef else meta["efs"]

    engine = open_engine(args.engine, meta, args.threads)
    t0 = time.perf_counter()
    engine.build(base)
    build = time.perf_counter() - t0
    print(f"{args.engine} build {build:.2f}s ({n / build:.0f} vectors/s)", file=sys.stderr)

    truth = [set(row) for row in gt.tolist()]
    for ef in efs:
        el = float("inf")
        for _ in range(max(args.repeat, 1)):
            t0 = time.perf_counter()
            labels = engine.search(queries, k, ef)
            el = min(el, time.perf_counter() - t0)
        found = sum(len(truth[i] & set(row)) for i, row in enumerate(labels.tolist()))
        hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        print(json.dumps({"engine": args.engine, "ef": ef, "recall_at_10": found / (nq * k), "qps": nq / el,
                          "build_seconds": build, "n": n, "dim": dim, "hwm_mb": round(hwm, 1)}), flush=True)


if __name__ == "__main__":
    main()
