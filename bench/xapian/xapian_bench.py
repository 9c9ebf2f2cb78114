#!/usr/bin/python3
"""The Xapian peer of the sherlock benchmark (optional; Debian's python3-xapian).

    /usr/bin/python3 xapian_bench.py build TEXT.tsv DBDIR [STEMMER]
    /usr/bin/python3 xapian_bench.py search DBDIR QUERIES.tsv PASSES WARMUP [STEMMER]

STEMMER: absent for the speed tables; a xapian.Stem language ("english") or
"none" for the relevance table (bench/relevance/), which then reads each
query through xapian.QueryParser (its own word cutting, the stemmer's
STEM_SOME, default operator AND), as an application of Xapian does.

build: TermGenerator without a stemmer (as the other peers: no stemming), or
with the named one (STEM_SOME: stemmed terms beside the unstemmed ones),
title and body indexed with positions into the same terms, the url, title and
body kept as document data; one commit, then the database is compacted into
one (xapian's counterpart of FTS5 'optimize' and Lucene forceMerge(1)).
Prints {"docs": N}.

search: words ANDed (OP_AND), a phrase as OP_PHRASE; BM25 (the default
weighting); top 10 with their data loaded. WARMUP untimed passes, then
PASSES timed passes. Prints {"latenciesMs": [...], "zeroHits": N, "top": [[URL, ...], ...]},
top: each query's hit URLs, best first, from the first (untimed) pass.
"""

import json
import os
import shutil
import sys
import time

import xapian


def build(text_file, db_dir, stem=None):
    tmp = db_dir + ".tmp"
    for d in (db_dir, tmp):
        shutil.rmtree(d, ignore_errors=True)
    db = xapian.WritableDatabase(tmp, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    if stem is not None:
        tg.set_stemmer(xapian.Stem(stem))
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


def parser(db, stem):
    """A QueryParser for plain words: the stemmer (STEM_SOME), AND between words."""
    qp = xapian.QueryParser()
    qp.set_database(db)
    qp.set_stemmer(xapian.Stem(stem))
    qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    qp.set_default_op(xapian.Query.OP_AND)
    return qp


def to_query(q):
    phrase = len(q) >= 2 and q.startswith('"') and q.endswith('"')
    words = (q[1:-1] if phrase else q).split()
    return xapian.Query(xapian.Query.OP_PHRASE if phrase else xapian.Query.OP_AND, words)


def run_one(enquire, query, urls=None):
    enquire.set_query(query)
    mset = enquire.get_mset(0, 10)
    n = 0
    for m in mset:
        data = m.document.get_data()
        if urls is not None:
            urls.append(data.split(b"\t", 1)[0].decode("utf-8"))
        n += 1
    return n


def search(db_dir, query_file, passes, warmup, stem=None):
    db = xapian.Database(db_dir)
    qp = None if stem is None else parser(db, stem)
    queries = []
    with open(query_file, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            text = line.split("\t", 1)[1]
            queries.append(to_query(text) if qp is None else qp.parse_query(text, 0))
    enquire = xapian.Enquire(db)
    top = [[] for _ in queries]
    zero = sum(1 for q, urls in zip(queries, top) if run_one(enquire, q, urls) == 0)
    for _ in range(1, warmup):
        for q in queries:
            run_one(enquire, q)
    lat = []
    for _ in range(passes):
        for q in queries:
            t = time.perf_counter()
            run_one(enquire, q)
            lat.append((time.perf_counter() - t) * 1000.0)
    print(json.dumps({"latenciesMs": [round(x, 4) for x in lat], "zeroHits": zero, "top": top}))


def main():
    a = sys.argv[1:]
    if len(a) in (3, 4) and a[0] == "build":
        build(a[1], a[2], a[3] if len(a) == 4 else None)
    elif len(a) in (5, 6) and a[0] == "search":
        search(a[1], a[2], int(a[3]), int(a[4]), a[5] if len(a) == 6 else None)
    else:
        print("usage: xapian_bench.py build TEXT DBDIR [STEMMER] | search DBDIR QUERIES PASSES WARMUP [STEMMER]", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    os.environ.setdefault("XAPIAN_FLUSH_THRESHOLD", "100000")
    main()
