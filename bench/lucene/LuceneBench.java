/*
 * The Lucene peer of the sherlock benchmark, compiled at bench time with javac
 * against Debian's liblucene8-java jars (lucene-core, lucene-analyzers-common):
 *
 *   java -cp CLASSES:JARS LuceneBench build TEXT.tsv INDEXDIR [ANALYZER]
 *   java -cp CLASSES:JARS LuceneBench search INDEXDIR QUERIES.tsv PASSES WARMUP [ANALYZER]
 *
 * ANALYZER: standard (the default; the speed tables), english or czech (the
 * relevance table's stemming rows, bench/relevance/); search must name the
 * one its index was built with.
 *
 * build: StandardAnalyzer (no stop words since Lucene 7, no stemming), or
 * EnglishAnalyzer / CzechAnalyzer (their stop words and stemmers), BM25
 * (the default similarity); fields url (stored, not indexed), title and body
 * (indexed with positions, stored); 256 MB RAM buffer, then forceMerge(1) and
 * commit. Prints {"docs":N}.
 *
 * search: each query of the set, cut into terms by the index's analyzer; a
 * term must match title or body, all terms are required; a phrase is a
 * PhraseQuery on title or body. WARMUP untimed
 * passes (the JIT needs a few), then PASSES timed passes of top-10 searches that also load the
 * stored url and title of each hit. Prints {"latenciesMs":[...],"zeroHits":N,"top":[[URL,...],...]},
 * top: each query's hit URLs, best first, from the first (untimed) pass.
 *
 * Text format: one document a line, id TAB url TAB title TAB text.
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.cz.CzechAnalyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;

public final class LuceneBench {
    private LuceneBench() {}

    public static void main(String[] args) throws IOException {
        if ((args.length == 3 || args.length == 4) && args[0].equals("build")) {
            build(Paths.get(args[1]), Paths.get(args[2]), analyzer(args.length == 4 ? args[3] : "standard"));
        } else if ((args.length == 5 || args.length == 6) && args[0].equals("search")) {
            search(Paths.get(args[1]), Paths.get(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]), analyzer(args.length == 6 ? args[5] : "standard"));
        } else {
            System.err.println("usage: LuceneBench build TEXT INDEXDIR [ANALYZER] | search INDEXDIR QUERIES PASSES WARMUP [ANALYZER]");
            System.exit(2);
        }
    }

    static Analyzer analyzer(String name) {
        switch (name) {
            case "standard": return new StandardAnalyzer();
            case "english": return new EnglishAnalyzer();
            case "czech": return new CzechAnalyzer();
            default: throw new IllegalArgumentException("unknown analyzer " + name);
        }
    }

    static void build(Path text, Path indexDir, Analyzer analyzer) throws IOException {
        IndexWriterConfig config = new IndexWriterConfig(analyzer);
        config.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        config.setRAMBufferSizeMB(256);
        long docs = 0;
        try (FSDirectory dir = FSDirectory.open(indexDir);
             IndexWriter writer = new IndexWriter(dir, config);
             BufferedReader in = Files.newBufferedReader(text, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split("\t", 4);
                if (f.length < 4) continue;
                Document doc = new Document();
                doc.add(new StoredField("url", f[1]));
                doc.add(new TextField("title", f[2], Field.Store.YES));
                doc.add(new TextField("body", f[3], Field.Store.YES));
                writer.addDocument(doc);
                docs++;
            }
            writer.forceMerge(1);
            writer.commit();
        }
        System.out.println("{\"docs\":" + docs + "}");
    }

    static Query either(String word) {
        return new BooleanQuery.Builder()
            .add(new TermQuery(new Term("title", word)), BooleanClause.Occur.SHOULD)
            .add(new TermQuery(new Term("body", word)), BooleanClause.Occur.SHOULD)
            .build();
    }

    /** The terms the analyzer makes of a query's text, as it made them of the body. */
    static String[] terms(Analyzer analyzer, String text) throws IOException {
        List<String> out = new ArrayList<>();
        try (TokenStream ts = analyzer.tokenStream("body", text)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken()) out.add(term.toString());
            ts.end();
        }
        return out.toArray(new String[0]);
    }

    static Query toQuery(String q, Analyzer analyzer) throws IOException {
        boolean phrase = q.length() >= 2 && q.startsWith("\"") && q.endsWith("\"");
        String[] words = terms(analyzer, phrase ? q.substring(1, q.length() - 1) : q);
        if (phrase) {
            return new BooleanQuery.Builder()
                .add(new PhraseQuery("title", words), BooleanClause.Occur.SHOULD)
                .add(new PhraseQuery("body", words), BooleanClause.Occur.SHOULD)
                .build();
        }
        BooleanQuery.Builder all = new BooleanQuery.Builder();
        for (String w : words) all.add(either(w), BooleanClause.Occur.MUST);
        return all.build();
    }

    /** What a result needs, as FTS5 and Xapian are asked for: url and title (not the body). */
    static final java.util.Set<String> RESULT_FIELDS = java.util.Set.of("url", "title");

    /** The query's top 10; their URLs appended to `urls` as a JSON array when it is not null. */
    static int runOne(IndexSearcher searcher, Query query, StringBuilder urls) throws IOException {
        TopDocs top = searcher.search(query, 10);
        if (urls != null) urls.append('[');
        for (int i = 0; i < top.scoreDocs.length; i++) {
            Document d = searcher.doc(top.scoreDocs[i].doc, RESULT_FIELDS);
            String url = d.get("url");
            if (url == null) throw new IllegalStateException("hit without url");
            if (urls != null) {
                if (i > 0) urls.append(',');
                urls.append('"').append(url.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
            }
        }
        if (urls != null) urls.append(']');
        return top.scoreDocs.length;
    }

    static void search(Path indexDir, Path queryFile, int passes, int warmup, Analyzer analyzer) throws IOException {
        List<Query> queries = new ArrayList<>();
        for (String line : Files.readAllLines(queryFile, StandardCharsets.UTF_8)) {
            if (line.isEmpty() || line.startsWith("#")) continue;
            int tab = line.indexOf('\t');
            queries.add(toQuery(line.substring(tab + 1), analyzer));
        }
        StringBuilder out = new StringBuilder("{\"latenciesMs\":[");
        int zeroHits = 0;
        StringBuilder top = new StringBuilder("[");
        try (FSDirectory dir = FSDirectory.open(indexDir); DirectoryReader reader = DirectoryReader.open(dir)) {
            IndexSearcher searcher = new IndexSearcher(reader);
            for (Query q : queries) {
                if (top.length() > 1) top.append(',');
                if (runOne(searcher, q, top) == 0) zeroHits++;
            }
            top.append(']');
            for (int w = 1; w < warmup; w++) for (Query q : queries) runOne(searcher, q, null);
            boolean first = true;
            for (int p = 0; p < passes; p++) {
                for (Query q : queries) {
                    long t = System.nanoTime();
                    runOne(searcher, q, null);
                    double ms = (System.nanoTime() - t) / 1e6;
                    if (!first) out.append(',');
                    out.append(String.format(java.util.Locale.ROOT, "%.4f", ms));
                    first = false;
                }
            }
        }
        out.append("],\"zeroHits\":").append(zeroHits).append(",\"top\":").append(top).append('}');
        System.out.println(out);
    }
}
