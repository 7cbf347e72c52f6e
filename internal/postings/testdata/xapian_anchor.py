#!/usr/bin/python3
"""Xapian anchor for BenchmarkSearchSynthetic: indexes the same analysed passages and runs the
same analysed queries (files written by the benchmark with KAIROS_BENCH_DUMP=DIR), top 10 by
BM25Weight, one query at a time on one thread, and prints wall and thread-CPU p50/p99.

    /usr/bin/python3 xapian_anchor.py DIR [k1 b]

Needs Debian's python3-xapian. Passages: one per line, tokens separated by spaces (the line
number is the key). Queries: one per line, distinct terms separated by spaces.
"""
import os
import sys
import tempfile
import time

import xapian


def pct(xs, p):
    s = sorted(xs)
    return s[int(p * (len(s) - 1))]


def main():
    d = sys.argv[1]
    k1 = float(sys.argv[2]) if len(sys.argv) > 2 else 1.2
    b = float(sys.argv[3]) if len(sys.argv) > 3 else 0.4
    with tempfile.TemporaryDirectory() as tmp:
        db = xapian.WritableDatabase(os.path.join(tmp, "db"), xapian.DB_CREATE_OR_OVERWRITE)
        start = time.perf_counter()
        n = 0
        with open(os.path.join(d, "passages.txt")) as f:
            for line in f:
                doc = xapian.Document()
                for t in line.split():
                    doc.add_term(t)
                db.add_document(doc)
                n += 1
                if n % 100000 == 0:
                    db.commit()
        db.commit()
        print(f"xapian: indexed {n} passages in {time.perf_counter() - start:.1f} s")
        db.close()
        rdb = xapian.Database(os.path.join(tmp, "db"))
        enq = xapian.Enquire(rdb)
        # BM25Weight(k1, k2, k3, b, min_normlen); k2 = 0 and k3 = 1 are Xapian's defaults.
        enq.set_weighting_scheme(xapian.BM25Weight(k1, 0, 1, b, 0.5))
        with open(os.path.join(d, "queries.txt")) as f:
            queries = [line.split() for line in f if line.strip()]
        reps = int(os.environ.get("REPS", "2"))
        wall, cpu, hits = [], [], 0
        for _ in range(reps):
            for q in queries:
                w0, c0 = time.perf_counter(), time.thread_time()
                enq.set_query(xapian.Query(xapian.Query.OP_OR, q))
                m = enq.get_mset(0, 10)
                hits += m.size()
                cpu.append(time.thread_time() - c0)
                wall.append(time.perf_counter() - w0)
        print(f"xapian: {len(wall)} queries, {hits} hits; wall p50 {pct(wall, .5)*1e3:.3f} ms p99 {pct(wall, .99)*1e3:.3f} ms; "
              f"thread-cpu p50 {pct(cpu, .5)*1e3:.3f} ms p99 {pct(cpu, .99)*1e3:.3f} ms")


if __name__ == "__main__":
    main()
