// Apache Lucene BM25 anchor of `kairos bench scale`: indexes the same passages, times top-k queries.
//
//   java -cp CLASSES:lucene-core.jar:lucene-analyzers-common.jar ScaleLucene
//        --passages P.jsonl --queries Q.jsonl --index DIR [--k 10] [--warmup 1000]
//        [--k1 1.2 --b 0.4] [--ram-mb 256] [--threads 1]
//
// P.jsonl: the records bench scale indexed ({"id","title","text"}: the text indexed is
// "title | text", as Kairos's passage) or `kairos passages` output ({"passage_id","text"}).
// Q.jsonl: one JSON string per line. Lucene side (Debian's liblucene8-java): BM25Similarity(k1, b)
// with Kairos's k1 and b, EnglishAnalyzer (its stop list, possessives, Porter stemmer), --threads
// indexing threads (as many as Kairos builds with: each parses its batches of lines and adds
// them, IndexWriter being thread-safe), a RAM buffer of --ram-mb, no merges while adding
// (NoMergePolicy: every flush is a segment), frequencies and norms but no positions (OR queries
// read none, as the Xapian anchor) and nothing stored. The queries are timed twice: on the
// unmerged index, then after forceMerge(1), timed on its own (merge_s), as an index a user
// serves would be merged. Each timed query is analysis + a BooleanQuery of SHOULD term clauses +
// IndexSearcher.search(q, k) (Lucene's block-max WAND once 1,000 hits are counted) + reading the
// k doc ids, one thread, after --warmup untimed queries (the JIT needs thousands). Prints one
// JSON object: version, passages, threads, build_s, segments, p50_ms, p99_ms, mean_ms, merge_s,
// merged_p50_ms, merged_p99_ms, merged_mean_ms, queries, empty. Progress goes to stderr.
//
// The source is compiled at run time (javac) into a cache directory keyed by its hash, so no
// class file is shipped; it reads JSON itself because the JDK has no JSON parser.

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Version;

public class ScaleLucene {
    static final String FIELD = "body";

    public static void main(String[] args) throws Exception {
        String passages = null, queries = null, index = null;
        int k = 10, warmup = 1000;
        float k1 = 1.2f, b = 0.4f;
        double ramMB = 256;
        int threads = 1;
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--passages": passages = v; break;
                case "--queries": queries = v; break;
                case "--index": index = v; break;
                case "--k": k = Integer.parseInt(v); break;
                case "--warmup": warmup = Integer.parseInt(v); break;
                case "--k1": k1 = Float.parseFloat(v); break;
                case "--b": b = Float.parseFloat(v); break;
                case "--ram-mb": ramMB = Double.parseDouble(v); break;
                case "--threads": threads = Integer.parseInt(v); break;
                default: die("unknown flag " + args[i]);
            }
        }
        if (passages == null || queries == null || index == null || args.length % 2 != 0) {
            die("usage: ScaleLucene --passages P.jsonl --queries Q.jsonl --index DIR [--k N] [--warmup N] [--k1 F] [--b F] [--ram-mb F] [--threads N]");
        }
        if (threads < 1) {
            die("--threads " + threads + ": want at least 1");
        }
        BM25Similarity sim = new BM25Similarity(k1, b);
        Analyzer analyzer = new EnglishAnalyzer();

        long start = System.nanoTime();
        FieldType ft = new FieldType();
        ft.setTokenized(true);
        ft.setStored(false);
        ft.setIndexOptions(IndexOptions.DOCS_AND_FREQS); // OR queries read no positions
        ft.freeze();
        IndexWriterConfig iwc = new IndexWriterConfig(analyzer)
                .setSimilarity(sim)
                .setRAMBufferSizeMB(ramMB)
                .setMergePolicy(NoMergePolicy.INSTANCE)
                .setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        int n = addAll(index, passages, iwc, ft, threads, start);
        double buildS = (System.nanoTime() - start) / 1e9;

        List<String> qs = new ArrayList<>();
        int ln = 0;
        for (String line : Files.readAllLines(Paths.get(queries), StandardCharsets.UTF_8)) {
            ln++;
            if (!line.isBlank()) {
                qs.add(Json.string(line, queries, ln));
            }
        }
        if (qs.isEmpty()) {
            die(queries + ": no queries");
        }
        double[] unmerged = timeQueries(index, sim, analyzer, qs, k, warmup);
        long mergeStart = System.nanoTime();
        IndexWriterConfig mc = new IndexWriterConfig(analyzer).setSimilarity(sim)
                .setOpenMode(IndexWriterConfig.OpenMode.APPEND); // the default TieredMergePolicy
        try (FSDirectory dir = FSDirectory.open(Paths.get(index)); IndexWriter w = new IndexWriter(dir, mc)) {
            w.forceMerge(1);
            w.commit();
        }
        double mergeS = (System.nanoTime() - mergeStart) / 1e9;
        System.err.printf("lucene: merged into one segment in %.1f s%n", mergeS);
        double[] merged = timeQueries(index, sim, analyzer, qs, k, warmup);
        System.out.printf("{\"version\":\"%s\",\"passages\":%d,\"threads\":%d,\"build_s\":%.6f,\"segments\":%d,\"p50_ms\":%.6f,\"p99_ms\":%.6f,\"mean_ms\":%.6f,"
                        + "\"merge_s\":%.6f,\"merged_segments\":%d,\"merged_p50_ms\":%.6f,\"merged_p99_ms\":%.6f,\"merged_mean_ms\":%.6f,\"queries\":%d,\"empty\":%d}%n",
                Version.LATEST, n, threads, buildS, (int) unmerged[3], unmerged[0], unmerged[1], unmerged[2],
                mergeS, (int) merged[3], merged[0], merged[1], merged[2], qs.size(), (int) unmerged[4]);
    }

    // addAll indexes the passages with threads threads: this one reads lines in batches, the
    // workers parse them and add the documents. It returns how many were added.
    static int addAll(String index, String passages, IndexWriterConfig iwc, FieldType ft, int threads, long start) throws Exception {
        final List<String> end = new ArrayList<>(); // the queue's end marker: an empty batch
        BlockingQueue<List<String>> batches = new ArrayBlockingQueue<>(4 * threads);
        AtomicInteger added = new AtomicInteger();
        try (FSDirectory dir = FSDirectory.open(Paths.get(index));
             IndexWriter w = new IndexWriter(dir, iwc);
             BufferedReader r = Files.newBufferedReader(Paths.get(passages), StandardCharsets.UTF_8)) {
            Thread[] workers = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                workers[t] = new Thread(() -> {
                    Document doc = new Document();
                    Field body = new Field(FIELD, "", ft);
                    doc.add(body);
                    try {
                        for (List<String> b; (b = batches.take()) != end; ) {
                            int line = Integer.parseInt(b.get(0));
                            for (int i = 1; i < b.size(); i++) {
                                body.setStringValue(Json.passage(b.get(i), passages, line + i - 1)[0]);
                                w.addDocument(doc);
                                int c = added.incrementAndGet();
                                if (c % 50000 == 0) {
                                    System.err.printf("lucene: indexed %d passages (%.0f/s)%n", c, c / ((System.nanoTime() - start) / 1e9));
                                }
                            }
                        }
                    } catch (Throwable x) { // a bad line dies in Json.fail; anything else here
                        System.err.println("scale_lucene: " + x);
                        System.exit(2);
                    }
                });
                workers[t].start();
            }
            int line = 0;
            List<String> b = new ArrayList<>();
            for (String s; (s = r.readLine()) != null; ) {
                line++;
                if (b.isEmpty()) {
                    b.add(Integer.toString(line)); // the batch's first line number, for errors
                }
                b.add(s);
                if (b.size() > 1000) {
                    batches.put(b);
                    b = new ArrayList<>();
                }
            }
            if (!b.isEmpty()) {
                batches.put(b);
            }
            for (int t = 0; t < threads; t++) {
                batches.put(end);
            }
            for (Thread t : workers) {
                t.join();
            }
            w.commit();
        }
        return added.get();
    }

    // timeQueries times each query once, after warmup untimed ones, on the index as it is now,
    // one thread; it returns p50, p99 and mean in ms, the segments searched and the empty answers.
    static double[] timeQueries(String index, BM25Similarity sim, Analyzer analyzer, List<String> qs, int k, int warmup) throws IOException {
        try (DirectoryReader reader = DirectoryReader.open(FSDirectory.open(Paths.get(index)))) {
            IndexSearcher searcher = new IndexSearcher(reader); // no executor: one thread
            searcher.setSimilarity(sim);
            for (int i = 0; i < warmup; i++) {
                run(searcher, analyzer, qs.get(i % qs.size()), k);
            }
            double[] ms = new double[qs.size()];
            int empty = 0;
            double sum = 0;
            for (int i = 0; i < qs.size(); i++) {
                long t = System.nanoTime();
                int hits = run(searcher, analyzer, qs.get(i), k);
                ms[i] = (System.nanoTime() - t) / 1e6;
                sum += ms[i];
                if (hits == 0) {
                    empty++;
                }
            }
            Arrays.sort(ms);
            return new double[] {pct(ms, 0.5), pct(ms, 0.99), sum / ms.length, reader.leaves().size(), empty};
        }
    }

    // run answers one query and reads the top k doc ids; it returns how many there are.
    static int run(IndexSearcher searcher, Analyzer analyzer, String q, int k) throws IOException {
        BooleanQuery.Builder bq = new BooleanQuery.Builder();
        try (TokenStream ts = analyzer.tokenStream(FIELD, q)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken()) {
                bq.add(new TermQuery(new Term(FIELD, term.toString())), BooleanClause.Occur.SHOULD);
            }
            ts.end();
        }
        TopDocs top = searcher.search(bq.build(), k);
        int sink = 0;
        for (ScoreDoc sd : top.scoreDocs) {
            sink += sd.doc;
        }
        return sink < 0 ? -1 : top.scoreDocs.length;
    }

    // pct is the p-quantile of sorted values as the Xapian anchor and Kairos take it.
    static double pct(double[] sorted, double p) {
        int i = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(i, sorted.length - 1))];
    }

    static void die(String msg) {
        System.err.println("scale_lucene: " + msg);
        System.exit(2);
    }

    // Json reads the two shapes the anchor needs, failing closed on anything else: a JSON string
    // (a query line) and a flat object of string or number values (a passage line).
    static final class Json {
        final String s, file;
        final int line;
        int i;

        Json(String s, String file, int line) {
            this.s = s;
            this.file = file;
            this.line = line;
        }

        // passage returns the text to index: "title | text", or text alone for kairos passages.
        static String[] passage(String s, String file, int line) {
            Json j = new Json(s, file, line);
            String id = null, pid = null, title = null, text = null;
            j.ws();
            j.expect('{');
            j.ws();
            if (j.peek() != '}') {
                while (true) {
                    j.ws();
                    String key = j.str();
                    j.ws();
                    j.expect(':');
                    j.ws();
                    String val = j.value();
                    switch (key) {
                        case "id": id = val; break;
                        case "passage_id": pid = val; break;
                        case "title": title = val; break;
                        case "text": text = val; break;
                        default: break;
                    }
                    j.ws();
                    if (j.peek() == ',') {
                        j.i++;
                        continue;
                    }
                    break;
                }
            }
            j.expect('}');
            j.ws();
            j.end();
            if (text == null) {
                j.fail("no \"text\"");
            }
            if (pid == null && title != null && !title.isEmpty()) {
                text = title + " | " + text;
            }
            return new String[] {text, pid != null ? pid : id};
        }

        static String string(String s, String file, int line) {
            Json j = new Json(s, file, line);
            j.ws();
            String v = j.str();
            j.ws();
            j.end();
            return v;
        }

        char peek() {
            if (i >= s.length()) {
                fail("unexpected end of line");
            }
            return s.charAt(i);
        }

        void expect(char c) {
            if (peek() != c) {
                fail("want '" + c + "'");
            }
            i++;
        }

        void ws() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }

        void end() {
            if (i != s.length()) {
                fail("trailing data");
            }
        }

        // value reads any JSON value: a string's text, a number's digits, or null for a
        // literal, an array or an object (skipped: kairos passages adds fields such as
        // "years" that the anchor does not index).
        String value() {
            char c = peek();
            if (c == '"') {
                return str();
            }
            if (c == '[' || c == '{') {
                skipNested();
                return null;
            }
            for (String lit : new String[] {"true", "false", "null"}) {
                if (s.startsWith(lit, i)) {
                    i += lit.length();
                    return null;
                }
            }
            return number();
        }

        void skipNested() {
            int depth = 0;
            do {
                char c = peek();
                if (c == '"') {
                    str();
                    continue;
                }
                i++;
                if (c == '[' || c == '{') {
                    depth++;
                } else if (c == ']' || c == '}') {
                    depth--;
                }
            } while (depth > 0);
        }

        String number() {
            int st = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            if (st == i) {
                fail("want a string or a number");
            }
            return s.substring(st, i);
        }

        String str() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = peek();
                i++;
                if (c == '"') {
                    return b.toString();
                }
                if (c < 0x20) {
                    fail("control character in a string");
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = peek();
                i++;
                switch (e) {
                    case '"': b.append('"'); break;
                    case '\\': b.append('\\'); break;
                    case '/': b.append('/'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'n': b.append('\n'); break;
                    case 'r': b.append('\r'); break;
                    case 't': b.append('\t'); break;
                    case 'u':
                        if (i + 4 > s.length()) {
                            fail("short \\u escape");
                        }
                        try {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException x) {
                            fail("bad \\u escape");
                        }
                        i += 4;
                        break;
                    default: fail("bad escape \\" + e);
                }
            }
        }

        void fail(String why) {
            die(file + ": line " + line + ", byte " + (i + 1) + ": " + why);
        }
    }
}
