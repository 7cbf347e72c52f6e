#!/usr/bin/python3
"""Xapian BM25 anchor of `kairos bench scale`: indexes the same passages, times top-k queries.

    scale_xapian.py --passages P.jsonl --queries Q.jsonl --db DIR [--k 10] [--warmup 100]
                    [--k1 1.2 --b 0.4]

P.jsonl: the records bench scale indexed ({"id","title","text"}: the text indexed is
"title | text", as Kairos's passage) or `kairos passages` output ({"passage_id","text"}).
Q.jsonl: one JSON string per line. Xapian side: Debian's python3-xapian, BM25Weight(k1, k2=0,
k3=1, b, min_normlen=0.5) with Kairos's k1 and b, TermGenerator and QueryParser with the English
stemmer, STEM_SOME, OR of the query terms, no stop list (as search/bench/xapian_bm25.py);
no positions are indexed: OR queries do not read them, and they cost Xapian's build time.
Each timed query is parse + get_mset(0, k) + reading the k docids, one thread.
Prints one JSON object: version, passages, build_s, p50_ms, p99_ms, mean_ms, queries, empty.
"""
import argparse
import json
import math
import sys
import time

import xapian


def percentile_ms(ds, p):
    s = sorted(ds)
    i = max(0, min(int(math.ceil(p * len(s))) - 1, len(s) - 1))
    return s[i] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--k1", type=float, default=1.2)
    ap.add_argument("--b", type=float, default=0.4)
    a = ap.parse_args()

    stem = xapian.Stem("english")
    start = time.perf_counter()
    db = xapian.WritableDatabase(a.db, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    tg.set_stemmer(stem)
    tg.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
    n = 0
    with open(a.passages, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                p = json.loads(line)
                text = p["text"]
                if "passage_id" not in p and p.get("title"):
                    text = p["title"] + " | " + text
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{a.passages}: line {n}: {e}")
            doc = xapian.Document()
            tg.set_document(doc)
            tg.index_text_without_positions(text)  # OR queries read no positions
            db.add_document(doc)
            if n % 50000 == 0:
                print(f"xapian: indexed {n} passages ({n / (time.perf_counter() - start):.0f}/s)", file=sys.stderr, flush=True)
    db.commit()
    db.close()
    build_s = time.perf_counter() - start

    db = xapian.Database(a.db)
    qp = xapian.QueryParser()
    qp.set_stemmer(stem)
    qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    qp.set_database(db)
    qp.set_default_op(xapian.Query.OP_OR)
    enq = xapian.Enquire(db)
    enq.set_weighting_scheme(xapian.BM25Weight(a.k1, 0, 1, a.b, 0.5))
    with open(a.queries, encoding="utf-8") as f:
        queries = [json.loads(l) for l in f if l.strip()]

    def run(q):
        enq.set_query(qp.parse_query(q, 0))  # flags 0: plain words, no boolean syntax
        return [m.docid for m in enq.get_mset(0, a.k)]

    for q in queries[: a.warmup]:
        run(q)
    ds, empty = [], 0
    for q in queries:
        t = time.perf_counter()
        hits = run(q)
        ds.append(time.perf_counter() - t)
        empty += not hits
    print(json.dumps(dict(version=xapian.version_string(), passages=n, build_s=build_s, p50_ms=percentile_ms(ds, 0.5),
                          p99_ms=percentile_ms(ds, 0.99), mean_ms=sum(ds) / len(ds) * 1e3,
                          queries=len(ds), empty=empty)))


if __name__ == "__main__":
    main()
