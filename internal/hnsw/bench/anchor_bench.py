#!/usr/bin/env python3
"""ANN anchors for `kairos bench ann`: hnswlib and FAISS on the same vectors as Kairos.

The harness (internal/hnsw/annbench) runs this script as child processes, one to build and one
to serve, so that each one's peak resident memory is its own (the harness reads it from the
child's rusage). Both read the directory `kairos bench ann --dump DIR` writes: base.f32 and
queries.f32 (row-major little-endian float32), gt.i32 and meta.json (n, dim, queries, k).

  anchor_bench.py version --engine E
      prints {"type": "version", "version": ...}; exits 3 when the library cannot be imported.
  anchor_bench.py build --engine E --data DIR --index DIR --threads T --params JSON
      builds on T threads from the base vectors, read in chunks (the input is never whole in
      memory), writes the index under --index, and prints {"type": "build", "build_s": ...}:
      training, adding and writing, not the interpreter's start.
  anchor_bench.py serve --engine E --data DIR --index DIR --sweep JSON --repeat R
      loads the index, then for each point of the sweep (a JSON list of objects, each the
      engine's search settings) runs all queries --repeat times in one batched call on one
      thread, the library's fastest single-thread path, and prints
      {"type": "point", "point": {...}, "seconds": best pass, "cpu_s": its CPU time, "ids": [[...]]},
      then {"type": "serve", "load_s": ..., "rss_bytes": VmRSS after the sweep}.
      Recall is the harness's to compute, from the ids, the same way for every engine.

Engines (inner product: the vectors are unit length, so this is cosine):
  hnswlib          hnswlib's HNSW, float32 vectors; params m, efc, seed
  faiss-hnsw-flat  FAISS IndexHNSWFlat, float32 vectors; params m, efc
  faiss-hnsw-sq    FAISS IndexHNSWSQ, 8-bit scalar codes (trained on a sample); params m, efc, train
  faiss-ivfflat    FAISS IndexIVFFlat over a flat inner-product quantizer; params nlist, train
  faiss-ivfpq      FAISS IndexIVFPQ, pq_m codes of 8 bits; params nlist, pq_m, train
Sweep keys: ef (the HNSW engines), nprobe (the IVF engines).

Needs Debian's python3-numpy with python3-hnswlib or python3-faiss (`make apt`); run it with
/usr/bin/python3.
"""
import argparse
import json
import os
import resource
import sys
import time

ENGINES = ("hnswlib", "faiss-hnsw-flat", "faiss-hnsw-sq", "faiss-ivfflat", "faiss-ivfpq")
CHUNK = 65536  # base vectors read and added at a time


def module_of(engine):
    return "hnswlib" if engine == "hnswlib" else "faiss"


def fail(msg, code=1):
    print(f"anchor_bench: {msg}", file=sys.stderr)
    sys.exit(code)


def import_engine(engine):
    """The engine's library and numpy; exit 3 (the harness's "not installed") when absent."""
    try:
        import numpy  # noqa: F401
        return __import__(module_of(engine))
    except ImportError as e:
        fail(f"{engine}: {e} (make apt installs python3-numpy, python3-hnswlib and python3-faiss)", 3)


def read_meta(d):
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    n, dim = meta["n"], meta["dim"]
    size = os.path.getsize(os.path.join(d, "base.f32"))
    if size != n * dim * 4:
        fail(f"{d}/base.f32: {size} bytes, meta.json says {n} x {dim} float32 ({n * dim * 4})")
    return meta


def base_chunks(d, meta):
    """Yields (first row, rows) of the base set, CHUNK rows at a time."""
    import numpy as np
    n, dim = meta["n"], meta["dim"]
    with open(os.path.join(d, "base.f32"), "rb") as f:
        for first in range(0, n, CHUNK):
            rows = min(CHUNK, n - first)
            block = np.fromfile(f, dtype="<f4", count=rows * dim)
            if block.size != rows * dim:
                fail(f"{d}/base.f32: short read at row {first}")
            yield first, block.reshape(rows, dim)


def train_sample(d, meta, want):
    """About `want` base rows for training, in 64 evenly spaced contiguous blocks: spread over
    the whole set, read without touching the rest of the file."""
    import numpy as np
    n, dim = meta["n"], meta["dim"]
    want = min(want, n)
    blocks = min(64, want)
    per = want // blocks
    out = []
    with open(os.path.join(d, "base.f32"), "rb") as f:
        for b in range(blocks):
            first = (n - per) * b // max(blocks - 1, 1)
            f.seek(first * dim * 4)
            out.append(np.fromfile(f, dtype="<f4", count=per * dim).reshape(per, dim))
    return np.ascontiguousarray(np.concatenate(out))


def read_queries(d, meta):
    import numpy as np
    nq, dim = meta["queries"], meta["dim"]
    q = np.fromfile(os.path.join(d, "queries.f32"), dtype="<f4")
    if q.size != nq * dim:
        fail(f"{d}/queries.f32: {q.size} values, meta.json says {nq} x {dim}")
    return q.reshape(nq, dim)


def vm_rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def index_file(index_dir):
    return os.path.join(index_dir, "index.bin")


def build(engine, lib, data, index_dir, threads, params):
    meta = read_meta(data)
    n, dim = meta["n"], meta["dim"]
    os.makedirs(index_dir, exist_ok=True)
    t0 = time.perf_counter()
    if engine == "hnswlib":
        import numpy as np
        index = lib.Index(space="ip", dim=dim)
        index.init_index(max_elements=n, ef_construction=params["efc"], M=params["m"], random_seed=params.get("seed", 1))
        for first, block in base_chunks(data, meta):
            index.add_items(block, np.arange(first, first + len(block)), num_threads=threads)
            progress(engine, first + len(block), n, t0)
        index.save_index(index_file(index_dir))
    else:
        lib.omp_set_num_threads(threads)
        if engine == "faiss-hnsw-flat":
            index = lib.IndexHNSWFlat(dim, params["m"], lib.METRIC_INNER_PRODUCT)
        elif engine == "faiss-hnsw-sq":
            index = lib.IndexHNSWSQ(dim, lib.ScalarQuantizer.QT_8bit, params["m"], lib.METRIC_INNER_PRODUCT)
        elif engine == "faiss-ivfflat":
            index = lib.IndexIVFFlat(lib.IndexFlatIP(dim), dim, params["nlist"], lib.METRIC_INNER_PRODUCT)
        else:
            index = lib.IndexIVFPQ(lib.IndexFlatIP(dim), dim, params["nlist"], params["pq_m"], 8, lib.METRIC_INNER_PRODUCT)
        if engine.startswith("faiss-hnsw"):
            index.hnsw.efConstruction = params["efc"]
        if not index.is_trained:
            sample = train_sample(data, meta, params["train"])
            print(f"{engine}: training on {len(sample)} vectors", file=sys.stderr, flush=True)
            index.train(sample)
            del sample
        for first, block in base_chunks(data, meta):
            index.add(block)
            progress(engine, first + len(block), n, t0)
        lib.write_index(index, index_file(index_dir))
    el = time.perf_counter() - t0
    print(json.dumps({"type": "build", "engine": engine, "build_s": el}), flush=True)


def progress(engine, done, n, t0):
    el = time.perf_counter() - t0
    rate = done / el if el > 0 else 0
    eta = (n - done) / rate if rate > 0 else 0
    print(f"  {engine}: added {done}/{n} ({rate:.0f}/s, ETA {eta:.0f}s)", file=sys.stderr, flush=True)


def serve(engine, lib, data, index_dir, sweep, repeat):
    meta = read_meta(data)
    n, dim, k = meta["n"], meta["dim"], meta["k"]
    queries = read_queries(data, meta)
    t0 = time.perf_counter()
    if engine == "hnswlib":
        index = lib.Index(space="ip", dim=dim)
        index.load_index(index_file(index_dir), max_elements=n)
        index.set_num_threads(1)
    else:
        lib.omp_set_num_threads(1)
        index = lib.read_index(index_file(index_dir))
    load = time.perf_counter() - t0
    for point in sweep:
        if engine.startswith("faiss-ivf"):
            index.nprobe = int(point["nprobe"])
            search = lambda: index.search(queries, k)[1]  # noqa: E731
        elif engine.startswith("faiss-hnsw"):
            index.hnsw.efSearch = max(int(point["ef"]), k)
            search = lambda: index.search(queries, k)[1]  # noqa: E731
        else:
            index.set_ef(max(int(point["ef"]), k))
            search = lambda: index.knn_query(queries, k=k, num_threads=1)[0]  # noqa: E731
        best, best_cpu, labels = float("inf"), 0.0, None
        for _ in range(max(repeat, 1)):
            c0, w0 = cpu_seconds(), time.perf_counter()
            labels = search()
            el, cpu = time.perf_counter() - w0, cpu_seconds() - c0
            if el < best:
                best, best_cpu = el, cpu
        print(json.dumps({"type": "point", "point": point, "seconds": best, "cpu_s": best_cpu,
                          "ids": labels.astype("int64").tolist()}), flush=True)
    print(json.dumps({"type": "serve", "load_s": load, "rss_bytes": vm_rss()}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phase", choices=("version", "build", "serve"))
    ap.add_argument("--engine", choices=ENGINES, required=True)
    ap.add_argument("--data", help="directory written by kairos bench ann --dump")
    ap.add_argument("--index", help="directory of the index (written by build, read by serve)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="build threads")
    ap.add_argument("--params", default="{}", help="build parameters, a JSON object")
    ap.add_argument("--sweep", default="[]", help="search settings, a JSON list of objects")
    ap.add_argument("--repeat", type=int, default=3, help="timed passes per sweep point, the fastest kept")
    args = ap.parse_args()
    lib = import_engine(args.engine)
    if args.phase == "version":
        version = getattr(lib, "__version__", None)
        if version is None:  # Debian's hnswlib has no __version__: ask the package
            from importlib import metadata
            try:
                version = metadata.version(module_of(args.engine))
            except metadata.PackageNotFoundError:
                version = ""
        print(json.dumps({"type": "version", "version": version}), flush=True)
        return
    if not args.data or not args.index:
        fail(f"{args.phase} needs --data and --index", 2)
    if args.phase == "build":
        build(args.engine, lib, args.data, args.index, args.threads, json.loads(args.params))
    else:
        serve(args.engine, lib, args.data, args.index, json.loads(args.sweep), args.repeat)


if __name__ == "__main__":
    main()
