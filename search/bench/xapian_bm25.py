#!/usr/bin/python3
"""Xapian BM25 over the passages Kairos indexes, evaluated as `kairos eval` evaluates.

    xapian_bm25.py --passages P.jsonl --queries Q.jsonl [--qrels QRELS.tsv] [--depth N]
                   [--k1 1.0 --b 0.5] [--json]

P.jsonl is `kairos passages` output (passage_id, doc_id, text): the same title-prefixed passages
of at most 120 words that Kairos indexes. Q.jsonl is a BEIR queries file or a QA file with
gold_doc_ids / gold_passage_ids (the formats `kairos eval` reads); --qrels is a BEIR qrels TSV.

Xapian side: Debian's python3-xapian, BM25Weight(k1, k2=0, k3=1, b, min_normlen=0.5) (Xapian's
defaults are k1 1, b 0.5), TermGenerator and QueryParser with the English (Snowball) stemmer,
STEM_SOME, OR of the query terms, no stop list (as Xapian ships). Passages are ranked to
--depth, grouped into documents at their best passage (search.RankDocuments), and scored with
the same formulas as search.Metrics: nDCG@10 with 2^g - 1 gains, MRR@10, recall at 1/5/20/100.
"""
import argparse
import json
import math
import sys
import tempfile

import xapian


def qid(q):
    v = q.get("id", q.get("_id"))
    return v if isinstance(v, str) else json.dumps(v)


def judgements(queries, qrels_path):
    out = {}
    if qrels_path:
        with open(qrels_path) as f:
            for n, line in enumerate(f, 1):
                cols = line.rstrip("\n").split("\t")
                if n == 1 and "query" in cols[0].lower():
                    continue
                if cols == [""]:
                    continue
                if len(cols) != 3:
                    sys.exit(f"{qrels_path}: line {n}: want 3 tab-separated columns, got {len(cols)}")
                out.setdefault(cols[0], ({}, False))[0][cols[1]] = float(cols[2])
        return out
    for q in queries:
        if q.get("gold_passage_ids"):
            out[qid(q)] = ({p: 1.0 for p in q["gold_passage_ids"]}, True)
        elif q.get("gold_doc_ids"):
            out[qid(q)] = ({d: 1.0 for d in q["gold_doc_ids"]}, False)
    return out


class Metrics:
    def __init__(self, k=10):
        self.k, self.n = k, 0
        self.sums = dict(ndcg=0.0, mrr=0.0, r1=0.0, r5=0.0, r20=0.0, r100=0.0)

    def add(self, ranked, gain):
        k, s = self.k, self.sums
        self.n += 1
        disc = lambda i: 1 / math.log2(i + 2)
        dcg = sum((2 ** gain[d] - 1) * disc(i) for i, d in enumerate(ranked[:k]) if gain.get(d, 0) > 0)
        ideal = sorted((g for g in gain.values() if g > 0), reverse=True)
        idcg = sum((2 ** g - 1) * disc(i) for i, g in enumerate(ideal[:k]))
        if idcg > 0:
            s["ndcg"] += dcg / idcg
        for i, d in enumerate(ranked[:k]):
            if gain.get(d, 0) > 0:
                s["mrr"] += 1 / (i + 1)
                break
        for name, n in (("r1", 1), ("r5", 5), ("r20", 20), ("r100", 100)):
            if ideal:
                s[name] += sum(1 for d in ranked[:n] if gain.get(d, 0) > 0) / len(ideal)

    def result(self):
        r = {name: v / max(self.n, 1) for name, v in self.sums.items()}
        r["queries"] = self.n
        return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passages", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--qrels")
    ap.add_argument("--depth", type=int, default=300)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--k1", type=float, default=1.0)
    ap.add_argument("--b", type=float, default=0.5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    stem = xapian.Stem("english")
    with tempfile.TemporaryDirectory() as tmp:
        db = xapian.WritableDatabase(tmp + "/db", xapian.DB_CREATE_OR_OVERWRITE)
        tg = xapian.TermGenerator()
        tg.set_stemmer(stem)
        tg.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
        pid, did = [], []
        with open(a.passages) as f:
            for n, line in enumerate(f, 1):
                try:
                    p = json.loads(line)
                    text = p["text"]
                except (ValueError, KeyError) as e:
                    sys.exit(f"{a.passages}: line {n}: {e}")
                doc = xapian.Document()
                tg.set_document(doc)
                tg.index_text(text)
                db.add_document(doc)  # Xapian docid = n
                pid.append(p["passage_id"])
                did.append(p["doc_id"])
        db.commit()

        qp = xapian.QueryParser()
        qp.set_stemmer(stem)
        qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
        qp.set_database(db)
        qp.set_default_op(xapian.Query.OP_OR)
        enq = xapian.Enquire(db)
        enq.set_weighting_scheme(xapian.BM25Weight(a.k1, 0, 1, a.b, 0.5))

        with open(a.queries) as f:
            queries = [json.loads(l) for l in f if l.strip()]
        judged = judgements(queries, a.qrels)
        m = Metrics(a.k)
        for q in queries:
            rel = judged.get(qid(q))
            if rel is None:
                continue
            gain, passage_level = rel
            xq = qp.parse_query(q["text"], 0)  # flags 0: plain words, no boolean syntax
            enq.set_query(xq)
            ranked, seen = [], set()
            for hit in enq.get_mset(0, a.depth):
                i = hit.docid - 1
                key = pid[i] if passage_level else did[i]
                if key not in seen:
                    seen.add(key)
                    ranked.append(key)
            m.add(ranked, gain)
    r = m.result()
    r.update(k1=a.k1, b=a.b, depth=a.depth, passages=len(pid))
    if a.json:
        print(json.dumps(r))
    else:
        print(f"xapian BM25 k1 {a.k1} b {a.b}: {r['queries']} queries, nDCG@{a.k} {r['ndcg']:.4f} "
              f"MRR@{a.k} {r['mrr']:.4f} R@1 {r['r1']:.4f} R@5 {r['r5']:.4f} R@20 {r['r20']:.4f} R@100 {r['r100']:.4f}")


if __name__ == "__main__":
    main()
