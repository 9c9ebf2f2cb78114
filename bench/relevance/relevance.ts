/**
 * The `relevance` part of `npm run bench`: how often each engine puts a page
 * that an outside judge chose into its top 10 — MRR@10 and success@10
 * (judgments.ts) — on judgments nobody on the team wrote:
 *
 *   English  the back-of-book indexes of python3.11-doc and postgresql-doc-15
 *            (back-of-book.ts), over the set's collection (the medium set's
 *            4,688 pages), the pages the other indexes judge are distractors;
 *   Czech    link texts in other inflected forms than their target page's
 *            text (czech.ts), over Debian's Czech documentation served on
 *            hosts of its own.
 *
 * Every engine is asked as a user asks, the same queries, top 10: sherlock
 * over its WebSocket (sherlock.ts sherlockTop), on the index of its own crawl
 * (the set's; a fresh crawl of the Czech site); the peers in their own
 * processes (peers/engines.ts) on indexes of the extracted text built here,
 * untimed: SQLite FTS5, Lucene's StandardAnalyzer and the language's
 * analyzer (EnglishAnalyzer, CzechAnalyzer), Xapian with its English stemmer
 * (it has no Czech one: there it reads queries with no stemmer). All of them
 * AND the words of a query, as in the searching table; no engine gets a
 * second try with OR.
 *
 * Judgment files are derived when missing (or with --new-judgments) and
 * committed; generated data is under bench/work/<set>/relevance and
 * bench/work/czech (its site's layout, access log, text and indexes), with
 * `ranks.jsonl`: each judged query's rank in each engine (0: not in the top 10).
 */

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePackages, isInstalled, packageVersion } from '../corpus.js';
import { extractCorpus } from '../extract.js';
import { fts5, lucene, xapian } from '../peers/engines.js';
import type { BenchContext, EngineEntry } from '../parts.js';
import type { Row, Table } from '../report.js';
import { portFree, startServer } from '../server-control.js';
import { NotBuiltError, sherlockEngine, sherlockTop, stateDir } from '../sherlock.js';
import { HUB_ADDRESS, hostUrl } from '../site.js';
import type { SiteLayout } from '../site.js';
import { deriveEnglish, ENGLISH_SETS } from './back-of-book.js';
import { CZECH_PACKAGES, czechLayout, deriveCzech, manRootOf, parseHeldOut, renderManPages } from './czech.js';
import { effectiveness, formatJudgments, judgedQueryFile, pageOf, parseJudgments } from './judgments.js';
import type { Judgment } from './judgments.js';

/** The Czech site's port, beside the set's (`--port`) and its searcher's and floor's (ws-load.ts). */
export const CZECH_PORT_OFFSET = 3;

/** Target of the issue, for the notes: sherlock's MRR@10 over the best peer's. */
const ENGLISH_TARGET = 1.05;

interface JudgedSet {
  readonly title: string;
  /** bench/relevance/<file>. */
  readonly file: string;
  readonly judgments: readonly Judgment[];
  readonly target: string;
}

/** One engine's answers to every query of a collection (its sets one after the other), or why it has none. */
interface Answers {
  readonly name: string;
  readonly top?: string[][];
  readonly failure?: Row;
  /** Queries answered with an error (sherlock's query language refusing one) → the error's code; counted as without hits. */
  readonly refused?: ReadonlyMap<string, string | undefined>;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 160);
}

function failed(name: string, err: unknown, log: (line: string) => void): Answers {
  if (err instanceof NotBuiltError && err.availability !== true) return { name, failure: { name, status: err.availability.status, message: err.availability.reason } };
  log(`  ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
  return { name, failure: { name, status: 'failed', message: firstLine(err) } };
}

/** Loads a committed judgment file, deriving it first when it is missing or `regenerate` says so. */
function loadOrDerive(file: string, regenerate: boolean, derive: () => { judgments: Judgment[]; header: string[] }, log: (line: string) => void): Judgment[] {
  if (!regenerate && existsSync(file)) return parseJudgments(readFileSync(file, 'utf8'));
  const { judgments, header } = derive();
  writeFileSync(file, formatJudgments(judgments, header));
  log(`derived ${judgments.length} judged queries → ${file}`);
  return judgments;
}

/** A peer's index of the collection's text built here (untimed), then the query file asked once. */
async function peerAnswers(ctx: BenchContext, entry: EngineEntry, indexDir: string): Promise<Answers> {
  const a = await entry.available(ctx);
  if (a !== true) return { name: entry.name, failure: { name: entry.name, status: a.status, message: a.reason } };
  try {
    ctx.log(`relevance: ${entry.name}`);
    await entry.build(ctx, indexDir);
    const r = await entry.search!(ctx, indexDir);
    if (r.top === undefined) throw new Error('no hit lists');
    return { name: entry.name, top: r.top };
  } catch (err) {
    return failed(entry.name, err, ctx.log);
  }
}

/** sherlock's answers: `index` builds (or crawls and builds) the index first when the run has not. */
async function sherlockAnswers(ctx: BenchContext, index: boolean): Promise<Answers> {
  const name = sherlockEngine.name;
  const a = await sherlockEngine.available(ctx);
  if (a !== true) return { name, failure: { name, status: a.status, message: a.reason } };
  try {
    ctx.log(`relevance: ${name}`);
    if (index) await sherlockEngine.build(ctx, '');
    const { top, refused } = await sherlockTop(ctx);
    if (refused.length > 0) ctx.log(`  sherlock refused ${refused.length} queries: ${refused.slice(0, 5).map((r) => `${JSON.stringify(r.q)} (${r.code ?? '?'})`).join(', ')}`);
    return { name, top, refused: new Map(refused.map((r) => [r.q, r.code])) };
  } catch (err) {
    return failed(name, err, ctx.log);
  }
}

/**
 * One table per judged set, the engines' answers cut to that set's queries;
 * each query's rank per engine goes to `ranksFile` (JSON lines), to look into.
 */
function setTables(layout: SiteLayout, sets: readonly JudgedSet[], peers: readonly Answers[], sherlock: Answers, ranksFile: string): Table[] {
  const tables: Table[] = [];
  const lines: string[] = [];
  let offset = 0;
  for (const set of sets) {
    const n = set.judgments.length;
    const ranks: number[][] = [];
    const names: string[] = [];
    const rowOf = (a: Answers): Row => {
      if (a.top === undefined) return a.failure!;
      const mine = a.top.slice(offset, offset + n);
      const e = effectiveness(set.judgments, mine.map((urls) => urls.map((u) => pageOf(layout, u))));
      ranks.push(e.ranks);
      names.push(a.name);
      return { name: a.name, status: 'ok', values: { queries: e.queries, mrr: e.mrr, success: e.success, zero: mine.filter((urls) => urls.length === 0).length } };
    };
    const peerRows = peers.map(rowOf);
    const sherlockRow = rowOf(sherlock);
    offset += n;
    const unfound = set.judgments.filter((_, q) => ranks.every((r) => r[q] === 0)).length;
    for (const [q, j] of set.judgments.entries()) lines.push(JSON.stringify({ set: set.file, query: j.query, relevant: j.relevant, ranks: Object.fromEntries(names.map((name, e) => [name, ranks[e]![q]])) }) + '\n');
    const refused = set.judgments.filter((j) => sherlock.refused?.has(j.query)).map((j) => `"${j.query}" (${sherlock.refused!.get(j.query) ?? '?'})`);
    const best = Math.max(...peerRows.map((r) => r.values?.['mrr'] ?? Number.NaN).filter((v) => Number.isFinite(v)));
    const mine = sherlockRow.values?.['mrr'];
    tables.push({
      id: `relevance-${set.file.replace(/\.tsv$/, '')}`,
      title: `Relevance — ${set.title}`,
      subtitle:
        `${n} judged queries (bench/relevance/${set.file}); each engine's top 10 once, pages compared by package and path. ` +
        `MRR@10: mean of 1 ÷ rank of the first relevant page in the top 10 (0 when none is); success@10: share of queries with one there.`,
      columns: [
        { key: 'queries', label: 'queries', format: 'int' },
        { key: 'mrr', label: 'MRR@10', format: 'dec3' },
        { key: 'success', label: 'success@10', format: 'dec3' },
        { key: 'zero', label: 'queries without hits', format: 'int' },
      ],
      ratios: [{ key: 'mrr', label: 'MRR@10', better: 'higher' }],
      peers: peerRows,
      sherlock: sherlockRow,
      notes: [
        `${unfound} of the ${n} queries have no relevant page in the top 10 of any engine that answered.`,
        ...(refused.length === 0 ? [] : [`sherlock answered ${refused.length} with an error, counted as without hits: ${refused.join(', ')}.`]),
        `${set.target}` +
          (mine !== undefined && Number.isFinite(best) && best > 0 ? ` This run: sherlock's MRR@10 ÷ the best peer's = ${(mine / best).toFixed(3)}.` : ''),
      ],
    });
  }
  writeFileSync(ranksFile, lines.join(''));
  return tables;
}

/** A context that asks `queryFile` once per engine (no timed passes), for collection `over`. */
function askOnce(ctx: BenchContext, queryFile: string, over: Partial<BenchContext> = {}): BenchContext {
  return { ...ctx, ...over, queryFile, opts: { ...ctx.opts, ...(over.opts ?? {}), passes: 0, warmup: 1 } };
}

function pushOnce(footnotes: string[], line: string): void {
  if (!footnotes.includes(line)) footnotes.push(line);
}

const SHERLOCK_HOW =
  "sherlock (relevance): `sherlock searcher run` on the index of its own crawl, each judged query sent once over the WebSocket (sherlock.v1, limit 10) as a user's search: words ANDed, each with its other forms (docs/search.md).";

async function englishTables(ctx: BenchContext, indexBuilt: boolean, footnotes: string[]): Promise<Table[]> {
  const present = ENGLISH_SETS.filter((s) => ctx.layout.hosts.some((h) => h.pkg === s.pkg));
  if (present.length < ENGLISH_SETS.length) ctx.log(`relevance: the ${ctx.opts.set} set lacks ${ENGLISH_SETS.filter((s) => !present.includes(s)).map((s) => s.pkg).join(', ')}; their judgments are left out`);
  const sets: JudgedSet[] = present.map((s) => ({
    title: `${s.pkg}'s back-of-book index (English)`,
    file: `${s.name}.tsv`,
    judgments: loadOrDerive(join(ctx.repoRoot, 'bench', 'relevance', `${s.name}.tsv`), ctx.opts.newJudgments, () => deriveEnglish(ctx.layout, s, packageVersion(s.pkg)), ctx.log),
    target: `Target (issue): sherlock's MRR@10 at least ${ENGLISH_TARGET}× the best peer's.`,
  }));
  if (sets.length === 0) return [];
  const dir = join(ctx.workDir, 'relevance');
  mkdirSync(dir, { recursive: true });
  const queryFile = join(dir, 'english.queries.tsv');
  writeFileSync(queryFile, judgedQueryFile(sets.flatMap((s) => s.judgments)));
  const once = askOnce(ctx, queryFile);
  const entries = [fts5(), lucene('standard'), lucene('english'), xapian('english')];
  const peers: Answers[] = [];
  for (const [i, entry] of entries.entries()) {
    peers.push(await peerAnswers(once, entry, join(dir, 'index', String(i))));
    pushOnce(footnotes, entry.how);
  }
  const sherlock = await sherlockAnswers(once, !indexBuilt);
  pushOnce(footnotes, SHERLOCK_HOW);
  return setTables(ctx.layout, sets, peers, sherlock, join(dir, 'ranks.jsonl'));
}

async function czechTables(ctx: BenchContext, footnotes: string[]): Promise<Table[]> {
  const work = join(ctx.repoRoot, 'bench', 'work');
  const dir = join(work, 'czech');
  const manRoot = manRootOf(work);
  mkdirSync(dir, { recursive: true });
  renderManPages(manRoot, ctx.log);
  const judgmentFile = join(ctx.repoRoot, 'bench', 'relevance', 'czech.tsv');
  const heldOutFile = join(ctx.repoRoot, 'bench', 'relevance', 'czech-held-out.txt');
  const port = ctx.opts.port + CZECH_PORT_OFFSET;
  if (ctx.opts.newJudgments || !existsSync(judgmentFile) || !existsSync(heldOutFile)) {
    const d = deriveCzech(czechLayout(port, manRoot, []));
    writeFileSync(judgmentFile, formatJudgments(d.judgments, d.header));
    writeFileSync(heldOutFile, ['# Pages held out of the Czech collection (Disallowed in its robots.txt): they carry the link texts of bench/relevance/czech.tsv.', '# Derived with it by bench/relevance/czech.ts.', ...d.heldOut].join('\n') + '\n');
    ctx.log(`derived ${d.judgments.length} Czech judged queries, ${d.heldOut.length} pages held out → ${judgmentFile}`);
  }
  const judgments = parseJudgments(readFileSync(judgmentFile, 'utf8'));
  const layout = czechLayout(port, manRoot, parseHeldOut(readFileSync(heldOutFile, 'utf8')));
  if (!(await portFree(port, [HUB_ADDRESS, ...layout.hosts.map((h) => h.address)]))) throw new Error(`port ${port} (the Czech site's) is taken on a loopback address; pick another --port`);
  const versions = Object.fromEntries(CZECH_PACKAGES.map((p) => [p, packageVersion(p)]));
  const corpus = extractCorpus(layout, join(dir, 'corpus'), JSON.stringify({ set: 'czech', versions, hosts: layout.hosts, port }), ctx.log);
  const seeds = layout.hosts.map((h) => hostUrl(layout, h.address, h.entry));
  const seedsFile = join(dir, 'seeds.txt');
  writeFileSync(seedsFile, seeds.join('\n') + '\n');
  const queryFile = join(dir, 'czech.queries.tsv');
  writeFileSync(queryFile, judgedQueryFile(judgments));
  const server = await startServer(layout, dir, ctx.distDir, 3600);
  ctx.log(`Czech site server pid ${server.pid}: ${corpus.pages} pages on ${layout.hosts.map((h) => h.address).join(', ')}:${port}`);
  try {
    const once = askOnce(ctx, queryFile, { workDir: dir, layout, corpus, queries: [], seedsFile, seeds, server, opts: { ...ctx.opts, port } });
    const entries = [fts5(), lucene('standard'), lucene('czech'), xapian('none')];
    const peers: Answers[] = [];
    for (const [i, entry] of entries.entries()) {
      peers.push(await peerAnswers(once, entry, join(dir, 'index', String(i))));
      pushOnce(footnotes, entry.how);
    }
    // A fresh crawl each run: the state is the gatherer's of this tree.
    rmSync(stateDir(once), { recursive: true, force: true });
    const sherlock = await sherlockAnswers(once, true);
    const [table] = setTables(
      layout,
      [{ title: "Debian's Czech documentation, queries in other inflected forms than their pages (Czech)", file: 'czech.tsv', judgments, target: "Target (issue): sherlock's MRR@10 above every peer's." }],
      peers,
      sherlock,
      join(dir, 'ranks.jsonl'),
    );
    return [
      {
        ...table!,
        notes: [
          `Collection: ${corpus.pages.toLocaleString('en')} pages (${CZECH_PACKAGES.filter((p) => p !== 'groff-base').map((p) => `${p} ${versions[p]}`).join(', ')}), served on ${layout.hosts.length} hosts of their own, ` +
            `gimp-help-cs's index page and the pages carrying the judged link texts held out (bench/relevance/czech-held-out.txt). Few queries: each one moves MRR@10 by up to ${(1 / judgments.length).toFixed(3)}.`,
          ...table!.notes,
        ],
      },
    ];
  } finally {
    await server.stop();
  }
}

/** Debian packages the part needs beyond the set's (the Czech collection). */
export function relevancePackages(opts: BenchContext['opts'], log: (line: string) => void): void {
  if (opts.noInstall) {
    const missing = CZECH_PACKAGES.filter((p) => !isInstalled(p));
    if (missing.length > 0) throw new Error(`missing Debian packages for the relevance part (and --no-install): ${missing.join(' ')}`);
  } else ensurePackages(CZECH_PACKAGES, log);
}

/**
 * The relevance tables: the English sets, then the Czech one. `indexBuilt`:
 * the indexing part ran in this run, so sherlock's index of the set is fresh.
 */
export async function relevanceTables(ctx: BenchContext, indexBuilt: boolean, footnotes: string[]): Promise<Table[]> {
  const tables = await englishTables(ctx, indexBuilt, footnotes);
  try {
    tables.push(...(await czechTables(ctx, footnotes)));
  } catch (err) {
    ctx.log(`relevance: the Czech set failed: ${err instanceof Error ? err.message : String(err)}`);
    const row: Row = { name: 'Czech collection', status: 'failed', message: firstLine(err) };
    tables.push({ id: 'relevance-czech', title: 'Relevance — Czech', subtitle: 'not measured', columns: [{ key: 'mrr', label: 'MRR@10', format: 'dec3' }], ratios: [], peers: [], sherlock: row, notes: [] });
  }
  return tables;
}
