#!/usr/bin/python3
"""The Xapian peer of the sherlock benchmark (optional; Debian's python3-xapian).

    /usr/bin/python3 xapian_bench.py build TEXT.tsv DBDIR
    /usr/bin/python3 xapian_bench.py search DBDIR QUERIES.tsv PASSES WARMUP

build: TermGenerator without a stemmer (as the other peers: no stemming),
title and body indexed with positions into the same terms, the url, title and
body kept as document data; one commit, then the database is compacted into
one (xapian's counterpart of FTS5 'optimize' and Lucene forceMerge(1)).
Prints {"docs": N}.

search: words ANDed (OP_AND), a phrase as OP_PHRASE; BM25 (the default
weighting); top 10 with their data loaded. WARMUP untimed passes, then
PASSES timed passes. Prints {"latenciesMs": [...], "zeroHits": N}.
"""

import json
import os
import shutil
import sys
import time

import xapian


def build(text_file, db_dir):
    tmp = db_dir + ".tmp"
    for d in (db_dir, tmp):
        shutil.rmtree(d, ignore_errors=True)
    db = xapian.WritableDatabase(tmp, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    docs = 0
    with open(text_file, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t", 3)
            if len(parts) < 4:
                continue
            doc = xapian.Document()
            tg.set_document(doc)
            tg.index_text(parts[2])
            tg.increase_termpos()
            tg.index_text(parts[3])
            doc.set_data(parts[1] + "\t" + parts[2] + "\t" + parts[3])
            db.add_document(doc)
            docs += 1
    db.commit()
    db.compact(db_dir)
    db.close()
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"docs": docs}))


def to_query(q):
    phrase = len(q) >= 2 and q.startswith('"') and q.endswith('"')
    words = (q[1:-1] if phrase else q).split()
    return xapian.Query(xapian.Query.OP_PHRASE if phrase else xapian.Query.OP_AND, words)


def run_one(enquire, query):
    enquire.set_query(query)
    mset = enquire.get_mset(0, 10)
    n = 0
    for m in mset:
        m.document.get_data()
        n += 1
    return n


def search(db_dir, query_file, passes, warmup):
    queries = []
    with open(query_file, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            queries.append(to_query(line.split("\t", 1)[1]))
    db = xapian.Database(db_dir)
    enquire = xapian.Enquire(db)
    zero = sum(1 for q in queries if run_one(enquire, q) == 0)
    for _ in range(1, warmup):
        for q in queries:
            run_one(enquire, q)
    lat = []
    for _ in range(passes):
        for q in queries:
            t = time.perf_counter()
            run_one(enquire, q)
            lat.append((time.perf_counter() - t) * 1000.0)
    print(json.dumps({"latenciesMs": [round(x, 4) for x in lat], "zeroHits": zero}))


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "build":
        build(a[1], a[2])
    elif len(a) == 5 and a[0] == "search":
        search(a[1], a[2], int(a[3]), int(a[4]))
    else:
        print("usage: xapian_bench.py build TEXT DBDIR | search DBDIR QUERIES PASSES WARMUP", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    os.environ.setdefault("XAPIAN_FLUSH_THRESHOLD", "100000")
    main()
