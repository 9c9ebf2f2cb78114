/**
 * Indexing and searching peers, each over the same extracted text and the same
 * query set: SQLite FTS5 (better-sqlite3), Lucene (Debian's liblucene8-java,
 * through bench/lucene/LuceneBench.java compiled here with javac) and,
 * optionally, Xapian (Debian's python3-xapian). Each build and each search run
 * is its own process, so peak RSS is that engine's alone; build time is the
 * wall time of that process (start-up included, as for sherlock's CLI).
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { check, run } from '../measure.js';
import { packageVersion } from './versions.js';
import type { Availability, BenchContext, BuildResult, EngineEntry, SearchResult } from '../parts.js';

/** Total size of the regular files under a path (a file or a directory). */
export function sizeOf(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of readdirSync(path)) total += sizeOf(join(path, name));
  return total;
}

function lastJson<T>(stdout: string, what: string): T {
  const line = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new Error(`${what}: no JSON result in output: ${line.slice(0, 200)}`);
  }
}

interface BuildOut {
  docs: number;
}
interface SearchOut {
  latenciesMs: number[];
  zeroHits: number;
  /** Each query's top 10 URLs, from the first pass. */
  top?: string[][];
}

function sqliteVersion(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    type Db = { prepare(sql: string): { get(): unknown }; close(): void };
    const Database = require('better-sqlite3') as new (file: string) => Db;
    const db = new Database(':memory:');
    const row = db.prepare('select sqlite_version() as v').get() as { v: string };
    db.close();
    return row.v;
  } catch {
    return undefined;
  }
}

const BUILD_TIMEOUT = 3_600_000;
const SEARCH_TIMEOUT = 1_800_000;
/** A search prints one JSON line with every query's top-10 URLs: keep all of it. */
const SEARCH_OUTPUT = 64 << 20;

export function fts5(): EngineEntry {
  const bs = packageVersion('better-sqlite3');
  return {
    name: `SQLite FTS5 ${sqliteVersion() ?? '?'} (better-sqlite3 ${bs ?? '?'})`,
    how:
      "SQLite FTS5: `CREATE VIRTUAL TABLE docs USING fts5(url UNINDEXED, title, body)` (unicode61 tokenizer), every page in one " +
      "transaction with journal_mode=OFF, synchronous=OFF, then 'optimize'; size is the database file. Queries: each word a quoted " +
      'term ANDed, phrases as FTS5 phrases, `ORDER BY rank LIMIT 10` (bm25) returning url and title.',
    async available(): Promise<Availability> {
      return bs === undefined ? { status: 'unavailable', reason: 'better-sqlite3 not installed (npm install)' } : true;
    },
    async build(ctx: BenchContext, indexDir: string): Promise<BuildResult> {
      mkdirSync(indexDir, { recursive: true });
      const db = join(indexDir, 'fts5.sqlite');
      const r = check(
        'fts5 build',
        await run(process.execPath, [join(ctx.distDir, 'peers', 'fts5-worker.js'), 'build', ctx.corpus.textFile, db], { timeoutMs: BUILD_TIMEOUT }),
      );
      return { wallMs: r.wallMs, peakRss: r.peakRss, docs: lastJson<BuildOut>(r.stdout, 'fts5 build').docs, sizeBytes: sizeOf(db) };
    },
    async search(ctx: BenchContext, indexDir: string): Promise<SearchResult> {
      const db = join(indexDir, 'fts5.sqlite');
      const r = check(
        'fts5 search',
        await run(process.execPath, [join(ctx.distDir, 'peers', 'fts5-worker.js'), 'search', db, ctx.queryFile, String(ctx.opts.passes), String(ctx.opts.warmup)], {
          timeoutMs: SEARCH_TIMEOUT,
          keepOutput: SEARCH_OUTPUT,
        }),
      );
      const out = lastJson<SearchOut>(r.stdout, 'fts5 search');
      return { latenciesMs: out.latenciesMs, zeroHits: out.zeroHits, peakRss: r.peakRss, ...(out.top === undefined ? {} : { top: out.top }) };
    },
  };
}

/** The jars of Debian's liblucene8-java that the Lucene program needs. */
export function luceneJars(): { core: string; analyzers: string; version: string } | undefined {
  let files: string[];
  try {
    files = execFileSync('dpkg', ['-L', 'liblucene8-java'], { encoding: 'utf8' }).split('\n');
  } catch {
    return undefined;
  }
  const core = files.find((f) => /^\/usr\/share\/java\/lucene-core-[\d.]+\.jar$/.test(f));
  const analyzers = files.find((f) => /^\/usr\/share\/java\/lucene-analyzers-common-[\d.]+\.jar$/.test(f));
  if (core === undefined || analyzers === undefined) return undefined;
  return { core, analyzers, version: /lucene-core-([\d.]+)\.jar$/.exec(core)![1]! };
}

function javaVersion(): string | undefined {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  return /version "([^"]+)"/.exec(r.stderr)?.[1];
}

/** Lucene's analyzers the bench uses: StandardAnalyzer (the speed tables; no stemming), EnglishAnalyzer and CzechAnalyzer (the relevance table). */
export type LuceneAnalyzer = 'standard' | 'english' | 'czech';
const ANALYZER_CLASS: Record<LuceneAnalyzer, string> = { standard: 'StandardAnalyzer', english: 'EnglishAnalyzer', czech: 'CzechAnalyzer' };

export function lucene(analyzer: LuceneAnalyzer = 'standard'): EngineEntry {
  const jars = luceneJars();
  const java = javaVersion();
  let classDir: string | undefined;
  const classpath = (): string => `${classDir}:${jars!.core}:${jars!.analyzers}`;
  const javaArgs = ['-Xms1g', '-Xmx4g', '-XX:+UseParallelGC'];
  return {
    name: `Lucene ${jars?.version ?? '?'}${analyzer === 'standard' ? '' : ' ' + ANALYZER_CLASS[analyzer]} (Debian liblucene8-java, Java ${java ?? '?'})`,
    how:
      'Lucene: bench/lucene/LuceneBench.java compiled with javac against lucene-core and lucene-analyzers-common from liblucene8-java; ' +
      `${ANALYZER_CLASS[analyzer]}, BM25; url stored, title and body indexed and stored; 256 MB RAM buffer, forceMerge(1), commit; size is the ` +
      `index directory. Queries: cut by the same analyzer, each term must match title or body, phrases as PhraseQuery; top 10 with stored fields. JVM: ${javaArgs.join(' ')}.`,
    async available(ctx: BenchContext): Promise<Availability> {
      if (jars === undefined) return { status: 'unavailable', reason: 'liblucene8-java not installed' };
      if (java === undefined) return { status: 'unavailable', reason: 'no java' };
      if (classDir === undefined) {
        const dir = join(ctx.workDir, '..', 'lucene-classes');
        mkdirSync(dir, { recursive: true });
        const src = join(ctx.repoRoot, 'bench', 'lucene', 'LuceneBench.java');
        const r = spawnSync('javac', ['-d', dir, '-cp', `${jars.core}:${jars.analyzers}`, src], { encoding: 'utf8' });
        if (r.status !== 0) return { status: 'unavailable', reason: `javac failed: ${r.stderr.trim().split('\n')[0] ?? ''}` };
        classDir = dir;
      }
      return true;
    },
    async build(ctx: BenchContext, indexDir: string): Promise<BuildResult> {
      rmSync(indexDir, { recursive: true, force: true });
      mkdirSync(indexDir, { recursive: true });
      const r = check(
        'lucene build',
        await run('java', [...javaArgs, '-cp', classpath(), 'LuceneBench', 'build', ctx.corpus.textFile, indexDir, analyzer], { timeoutMs: BUILD_TIMEOUT }),
      );
      return { wallMs: r.wallMs, peakRss: r.peakRss, docs: lastJson<BuildOut>(r.stdout, 'lucene build').docs, sizeBytes: sizeOf(indexDir) };
    },
    async search(ctx: BenchContext, indexDir: string): Promise<SearchResult> {
      const r = check(
        'lucene search',
        await run('java', [...javaArgs, '-cp', classpath(), 'LuceneBench', 'search', indexDir, ctx.queryFile, String(ctx.opts.passes), String(ctx.opts.warmup), analyzer], {
          timeoutMs: SEARCH_TIMEOUT,
          keepOutput: SEARCH_OUTPUT,
        }),
      );
      const out = lastJson<SearchOut>(r.stdout, 'lucene search');
      return { latenciesMs: out.latenciesMs, zeroHits: out.zeroHits, peakRss: r.peakRss, ...(out.top === undefined ? {} : { top: out.top }) };
    },
  };
}

const DEBIAN_PYTHON = '/usr/bin/python3';

function xapianVersion(): string | undefined {
  if (!existsSync(DEBIAN_PYTHON)) return undefined;
  const r = spawnSync(DEBIAN_PYTHON, ['-c', 'import xapian; print(xapian.version_string())'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/**
 * `stemmer`: undefined for the speed tables (no stemmer, the query's words as
 * terms); a xapian.Stem language or "none" for the relevance table, where
 * xapian.QueryParser reads each query (bench/xapian/xapian_bench.py).
 */
export function xapian(stemmer?: string): EngineEntry {
  const version = xapianVersion();
  const extra = stemmer === undefined ? [] : [stemmer];
  return {
    name: `Xapian ${version ?? '?'}${stemmer === undefined ? '' : stemmer === 'none' ? ', no stemmer, QueryParser' : `, Stem("${stemmer}")`} (Debian python3-xapian)`,
    how:
      stemmer === undefined
        ? 'Xapian (optional): bench/xapian/xapian_bench.py with Debian\'s python3; TermGenerator without stemmer, title and body with ' +
          'positions, url/title/body as document data, commit then compact; size is the compacted database. Queries: OP_AND of the ' +
          'words or OP_PHRASE, BM25, top 10 with their data.'
        : `Xapian (optional): bench/xapian/xapian_bench.py; TermGenerator with ${stemmer === 'none' ? 'no stemmer' : `Stem("${stemmer}") (STEM_SOME)`}, ` +
          `title and body with positions, compacted. Queries: xapian.QueryParser${stemmer === 'none' ? '' : ' with the same stemmer'}, default operator AND, no operators; BM25, top 10.`,
    async available(): Promise<Availability> {
      return version === undefined ? { status: 'unavailable', reason: 'python3-xapian not installed' } : true;
    },
    async build(ctx: BenchContext, indexDir: string): Promise<BuildResult> {
      rmSync(indexDir, { recursive: true, force: true });
      const script = join(ctx.repoRoot, 'bench', 'xapian', 'xapian_bench.py');
      const r = check('xapian build', await run(DEBIAN_PYTHON, [script, 'build', ctx.corpus.textFile, indexDir, ...extra], { timeoutMs: BUILD_TIMEOUT }));
      return { wallMs: r.wallMs, peakRss: r.peakRss, docs: lastJson<BuildOut>(r.stdout, 'xapian build').docs, sizeBytes: sizeOf(indexDir) };
    },
    async search(ctx: BenchContext, indexDir: string): Promise<SearchResult> {
      const script = join(ctx.repoRoot, 'bench', 'xapian', 'xapian_bench.py');
      const r = check(
        'xapian search',
        await run(DEBIAN_PYTHON, [script, 'search', indexDir, ctx.queryFile, String(ctx.opts.passes), String(ctx.opts.warmup), ...extra], {
          timeoutMs: SEARCH_TIMEOUT,
          keepOutput: SEARCH_OUTPUT,
        }),
      );
      const out = lastJson<SearchOut>(r.stdout, 'xapian search');
      return { latenciesMs: out.latenciesMs, zeroHits: out.zeroHits, peakRss: r.peakRss, ...(out.top === undefined ? {} : { top: out.top }) };
    },
  };
}

/** The bare indexer (bare-indexer.ts): not an engine but the floor of indexing in JavaScript, one thread. */
export function bareIndexer(): EngineEntry {
  return {
    name: 'bare JS indexer (one thread, a floor)',
    how:
      'bare JS indexer (bench/peers/bare-indexer.ts): the least a positional inverted index in JavaScript does, one thread, on the same extracted text: ' +
      "sherlock's word cutter, a spelling table, varint page gaps and positions per word, words sorted and written; no fields, word types, cards, " +
      'duplicates or links. It reads the text as the FTS5 process does, so the two build times differ by the indexing alone.',
    async available(): Promise<Availability> {
      return true;
    },
    async build(ctx: BenchContext, indexDir: string): Promise<BuildResult> {
      mkdirSync(indexDir, { recursive: true });
      const out = join(indexDir, 'postings');
      const r = check('bare indexer', await run(process.execPath, [join(ctx.distDir, 'peers', 'bare-indexer.js'), ctx.corpus.textFile, out], { timeoutMs: BUILD_TIMEOUT }));
      return { wallMs: r.wallMs, peakRss: r.peakRss, docs: lastJson<BuildOut>(r.stdout, 'bare indexer').docs, sizeBytes: sizeOf(out) };
    },
  };
}
