#!/usr/bin/env python3
"""hnswlib reference for `kairos bench ann`.

Reads the directory written by `kairos bench ann --dump DIR` (base.f32, queries.f32, gt.i32,
meta.json), builds hnswlib on the SAME vectors with the same M / efConstruction / seed (inner
product space: the vectors are unit length, so this is cosine), and prints one JSON line per ef in
the format of `kairos bench ann --json`:
  {"ef", "recall_at_10", "qps", "build_seconds", "n", "dim"}
Build uses all cores (as Kairos does); queries run with num_threads=1 in one batched call, which is
hnswlib's fastest single-thread path (no per-query Python overhead); the best of --repeat passes
is kept, as Kairos does.

Needs the Debian package python3-hnswlib; run it with /usr/bin/python3.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

try:
    import hnswlib
except ImportError:
    sys.exit("hnswlib_bench: python module hnswlib missing: apt-get install -y python3-hnswlib, "
             "and run with /usr/bin/python3")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="directory written by kairos bench ann --dump")
    ap.add_argument("--ef", help="comma-separated ef list (default: the one in meta.json)")
    ap.add_argument("--threads", type=int, default=-1, help="build threads (-1: all cores)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed passes per ef, best QPS kept (as kairos bench ann --repeat)")
    args = ap.parse_args()

    with open(os.path.join(args.dir, "meta.json")) as f:
        meta = json.load(f)
    n, dim, nq, k = meta["n"], meta["dim"], meta["queries"], meta["k"]
    base = np.fromfile(os.path.join(args.dir, "base.f32"), dtype="<f4")
    queries = np.fromfile(os.path.join(args.dir, "queries.f32"), dtype="<f4")
    gt = np.fromfile(os.path.join(args.dir, "gt.i32"), dtype="<i4")
    if base.size != n * dim or queries.size != nq * dim or gt.size != nq * k:
        sys.exit(f"hnswlib_bench: {args.dir}: file sizes do not match meta.json "
                 f"(base {base.size}, queries {queries.size}, gt {gt.size} values)")
    base, queries, gt = base.reshape(n, dim), queries.reshape(nq, dim), gt.reshape(nq, k)
    efs = [int(e) for e in args.ef.split(",")] if args.ef else meta["efs"]

    index = hnswlib.Index(space="ip", dim=dim)
    index.init_index(max_elements=n, ef_construction=meta["efc"], M=meta["m"], random_seed=meta["seed"])
    t0 = time.perf_counter()
    index.add_items(base, np.arange(n), num_threads=args.threads)
    build = time.perf_counter() - t0
    print(f"hnswlib build {build:.2f}s", file=sys.stderr)

    index.set_num_threads(1)
    truth = [set(row) for row in gt.tolist()]
    for ef in efs:
        index.set_ef(max(ef, k))
        el = float("inf")
        for _ in range(max(args.repeat, 1)):
            t0 = time.perf_counter()
            labels, _ = index.knn_query(queries, k=k, num_threads=1)
            el = min(el, time.perf_counter() - t0)
        found = sum(len(truth[i] & set(row)) for i, row in enumerate(labels.tolist()))
        print(json.dumps({"ef": ef, "recall_at_10": found / (nq * k), "qps": nq / el,
                          "build_seconds": build, "n": n, "dim": dim}))


if __name__ == "__main__":
    main()
