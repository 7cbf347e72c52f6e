#!/usr/bin/python3
"""Query files for the COVID FAQ paraphrase benchmark (../shared/data/faq-covid-deepset).

    faq_pairs.py FAQ.csv PAIRS.csv OUTDIR [--seed 12]

Queries are the question_2 of the pairs with similar=1; the gold documents are the FAQ rows
(1-based row numbers, the document ids Kairos gives an FAQ without an id column) whose
question equals question_1 (whitespace-normalised). The pairs are shuffled with the seed and
split in halves: OUTDIR/q-train.jsonl (choose on it) and OUTDIR/q-test.jsonl (report it).
"""
import argparse
import csv
import json
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("faq")
    ap.add_argument("pairs")
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=12)
    a = ap.parse_args()
    norm = lambda s: " ".join(s.split())
    with open(a.faq, newline="") as f:
        rows = list(csv.DictReader(f))
    byq = {}
    for i, r in enumerate(rows, 1):
        byq.setdefault(norm(r["question"]), []).append(str(i))
    with open(a.pairs, newline="") as f:
        pairs = [p for p in csv.DictReader(f) if p["similar"] == "1"]
    missing = [p["question_1"] for p in pairs if norm(p["question_1"]) not in byq]
    if missing:
        sys.exit(f"{len(missing)} pairs name a question the FAQ lacks, e.g. {missing[0]!r}")
    idx = list(range(len(pairs)))
    random.Random(a.seed).shuffle(idx)
    half = len(idx) // 2
    for name, sel in (("train", idx[:half]), ("test", idx[half:])):
        with open(f"{a.outdir}/q-{name}.jsonl", "w") as o:
            for j in sel:
                p = pairs[j]
                o.write(json.dumps({"id": "p%d" % j, "text": p["question_2"], "gold_doc_ids": byq[norm(p["question_1"])]}) + "\n")
    print(f"{len(pairs)} pairs: {half} train, {len(pairs) - half} test", file=sys.stderr)


if __name__ == "__main__":
    main()
