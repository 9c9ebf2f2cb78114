/**
 * `npm run bench`: every speed claim of sherlock as a ratio against peers
 * measured in the same run on the same machine (DESIGN §11).
 *
 * Steps: install the Debian packages that are missing → lay the corpus out as
 * loopback hosts → extract its text (cached) → load the committed query set →
 * start the site server → gathering (wget, crawlee, a bare undici loop, sherlock) → URL database →
 * indexing and searching (SQLite FTS5, Lucene, Xapian, sherlock) → relevance
 * on outside judgments (bench/relevance/, its own Czech site) → exports →
 * the simulated web (crawl-scale.ts, `--only crawl-scale`) → the result
 * cache on a repeated query mix (result-cache.ts, `--only result-cache`) →
 * suggestions for the queries typed letter by letter (suggest.ts, `--only
 * suggest`) →
 * stop the server → print the tables and write bench/results/latest.md.
 *
 * Generated data lives in bench/work/ (git-ignored). Every child process has
 * a time limit and runs in its own process group; on exit, crash or signal the
 * harness kills what it started, by pid, and the site server stops by itself
 * when the harness's pipe to it closes.
 */

import { cpus, release, totalmem, type as osType } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyse, logSize, readLogRange } from './access-log.js';
import { buildLayout, ensurePackages, isInstalled, OPTIONAL_TOOL_PACKAGES, packagesOf, packageVersion, TOOL_PACKAGES } from './corpus.js';
import { extractCorpus } from './extract.js';
import { killAllChildren } from './measure.js';
import { parseOptions, USAGE, UsageError } from './options.js';
import { crawlee, undiciLoop, undiciPrepareFloor, wget } from './peers/gather.js';
import { bareSearch } from './peers/bare-search.js';
import { bareWs } from './peers/bare-ws.js';
import { bareIndexer, fts5, lucene, xapian } from './peers/engines.js';
import { sqliteUrlTable } from './peers/urldb.js';
import { urlDbScale } from './urldb-run.js';
import { INJECT_BATCH, PLAN_SIZE } from './urldb-workload.js';
import { warcioCdx } from './peers/exports.js';
import { arcSetSize, sherlockArcSetCdx, warcioArcSetCdx } from './arc-set-export.js';
import { parseFloor, sherlockArchiveImport, warcioArchiveRead } from './archive-import.js';
import { nutchStateSize, sherlockNutchExport } from './nutch-state.js';
import { pdfTable } from './pdf-extract.js';
import { simWebTable } from './crawl-scale.js';
import { resultCacheTable } from './result-cache.js';
import { suggestTable } from './suggest.js';
import { ensureScaleCorpus, UNFETCHED_PER_DOC, type ScaleCorpus } from './scale-corpus.js';
import { rebuildUnderLoad } from './scale-swap.js';
import { loadOrGenerate } from './queries.js';
import { relevancePackages, relevanceTables } from './relevance/relevance.js';
import { renderReport } from './report.js';
import type { Column, RatioSpec, Row, Table } from './report.js';
import { portFree, startServer } from './server-control.js';
import { deflatePathEffect, NotBuiltError, sherlockEngine, sherlockExport, sherlockGather, sherlockUrlDb } from './sherlock.js';
import { WS_CLIENTS, WS_DEPTH } from './ws-load.js';
import { HUB_ADDRESS, SLOW_DELAY_MS, hostUrl } from './site.js';
import { median, medianOfRuns, percentile, topOverlap } from './stats.js';
import type { BenchContext, BenchEntry, BenchOptions, EngineEntry, ExportEntry, GatherEntry, PartId, SearchResult, UrlDbEntry, UrlDbScale } from './parts.js';

const distDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(distDir, '..', '..');
const started = Date.now();

function log(line: string): void {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 160);
}

const MIB = 1048576;

function rowFrom(name: string, runs: Array<Record<string, number | undefined>>): Row {
  return { name, status: 'ok', values: medianOfRuns(runs) };
}

/** The row of an entry that cannot run (and says why), or undefined when it can. */
async function availability(ctx: BenchContext, entry: BenchEntry): Promise<Row | undefined> {
  const a = await entry.available(ctx);
  if (a === true) return undefined;
  return { name: entry.name, status: a.status, message: a.reason };
}

// ---------------------------------------------------------------- gathering

const GATHER_COLUMNS: Column[] = [
  { key: 'pages', label: 'pages', format: 'int' },
  { key: 'requests', label: 'requests', format: 'int' },
  { key: 's', label: 'time s', format: 's' },
  { key: 'pagesPerS', label: 'pages/s', format: 'dec1' },
  { key: 'mibPerS', label: 'MiB/s', format: 'dec2' },
  { key: 'robots', label: 'robots.txt violations', format: 'int' },
  { key: 'delay', label: 'Crawl-delay breaches', format: 'int' },
  { key: 'inflight', label: 'max in flight per IP', format: 'int' },
  { key: 'cpuMsPerPage', label: 'CPU ms/page', format: 'dec2' },
  { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
];
const GATHER_RATIOS: RatioSpec[] = [
  { key: 'pagesPerS', label: 'pages/s', better: 'higher' },
  { key: 'cpuMsPerPage', label: 'CPU/page', better: 'lower' },
];

async function gatherRow(ctx: BenchContext, entry: GatherEntry): Promise<Row> {
  const skip = await availability(ctx, entry);
  if (skip !== undefined) return skip;
  const server = ctx.server!;
  const runs: Array<Record<string, number | undefined>> = [];
  try {
    for (let i = 0; i < ctx.opts.runs; i++) {
      const runDir = join(ctx.workDir, 'run', 'gather');
      rmSync(runDir, { recursive: true, force: true });
      mkdirSync(runDir, { recursive: true });
      const from = logSize(server.logFile);
      const r = await entry.crawl(ctx, runDir);
      await new Promise((resolve) => setTimeout(resolve, 300)); // responses still closing are logged
      const stats = analyse(ctx.layout, readLogRange(server.logFile, from, logSize(server.logFile)));
      rmSync(runDir, { recursive: true, force: true });
      const s = r.wallMs / 1000;
      runs.push({
        pages: stats.pages,
        requests: stats.requests,
        s,
        pagesPerS: stats.pages / s,
        mibPerS: stats.bytes / MIB / s,
        robots: stats.robotsViolations,
        delay: stats.crawlDelayBreaches,
        inflight: stats.maxInflightPerIp,
        cpuMsPerPage: r.cpuMs === undefined ? undefined : r.cpuMs / stats.pages,
        rss: r.peakRss,
      });
      log(`  ${entry.name} run ${i + 1}: ${stats.pages} pages, ${stats.requests} requests in ${s.toFixed(1)} s, CPU ${r.cpuMs === undefined ? '?' : (r.cpuMs / 1000).toFixed(1)} s; statuses ${JSON.stringify(stats.statuses)}; robots ${stats.robotsViolations}, delay ${stats.crawlDelayBreaches}, in flight ${stats.maxInflightPerIp}`);
    }
  } catch (err) {
    if (err instanceof NotBuiltError && err.availability !== true) return { name: entry.name, status: err.availability.status, message: err.availability.reason };
    log(`  ${entry.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    return { name: entry.name, status: 'failed', message: firstLine(err) };
  }
  return rowFrom(entry.name, runs);
}

/** One untimed GET of every page, so the server answers from memory when the crawlers come (site-server.ts render()). */
async function warmSite(ctx: BenchContext): Promise<void> {
  const urls = readFileSync(ctx.corpus.textFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t')[1]!);
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < urls.length) {
      const url = urls[next++]!;
      await fetch(url, { headers: { 'User-Agent': 'sherlock-bench-warmup' } }).then((r) => r.arrayBuffer()).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  log(`site warmed: ${urls.length} pages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function gatheringTable(ctx: BenchContext, footnotes: string[]): Promise<Table> {
  const peers: Row[] = [];
  for (const entry of [wget(), crawlee(), undiciLoop()]) {
    log(`gathering: ${entry.name}`);
    peers.push(await gatherRow(ctx, entry));
    footnotes.push(entry.how);
  }
  log(`gathering: ${sherlockGather.name}`);
  const sherlock = await gatherRow(ctx, sherlockGather);
  footnotes.push(sherlockGather.how);
  const special = ctx.layout.hosts.filter((h) => h.behaviour !== 'normal' || h.crawlDelay !== undefined || h.disallow === undefined);
  return {
    id: 'gather',
    title: 'Gathering — crawling the site on loopback',
    subtitle:
      `${ctx.layout.hosts.length} hosts (127.0.0.2–${ctx.layout.hosts[ctx.layout.hosts.length - 1]!.address}, port ${ctx.layout.port}), ` +
      `${ctx.corpus.pages.toLocaleString('en')} pages on the site (the indexing corpus; some are linked from no page a crawler may fetch); ` +
      `seeds: one entry page per host; medians of ${ctx.opts.runs} run(s). ` +
      'Counted from the server\'s access log: pages = distinct HTML pages answered 200. ' +
      'CPU: user + system time of the crawler\'s processes (GNU time), divided by its pages.',
    columns: GATHER_COLUMNS,
    ratios: GATHER_RATIOS,
    peers,
    sherlock,
    notes: [
      'Hosts with special behaviour: ' +
        special
          .map((h) => `${h.name} (${[h.behaviour !== 'normal' ? h.behaviour : '', h.crawlDelay !== undefined ? `Crawl-delay ${h.crawlDelay}` : '', h.disallow === undefined ? 'no robots.txt' : ''].filter((x) => x !== '').join(', ')})`)
          .join('; ') +
        `. Every host: robots.txt Disallows, ~1% of pages 404, ~2% of links via a 301; slow = ${SLOW_DELAY_MS} ms per answer; flaky = 6% 500, 3% 503, 3% connection reset.`,
    ],
  };
}

/**
 * The crawl-scale part (issue 32): the simulated web's two configurations
 * (crawl-scale.ts), then processor time per page of wget, the bare undici
 * loop, sherlock's processor floor and sherlock on the set's site in the same run.
 */
async function crawlScaleTables(ctx: BenchContext, footnotes: string[]): Promise<Table[]> {
  const simWeb = await simWebTable(ctx, footnotes);
  await warmSite(ctx);
  const peers: Row[] = [];
  for (const entry of [wget(), undiciLoop(), undiciPrepareFloor()]) {
    log(`crawl scale, the site: ${entry.name}`);
    peers.push(await gatherRow(ctx, entry));
    footnote(footnotes, entry.how);
  }
  log(`crawl scale, the site: ${sherlockGather.name}`);
  const sherlock = await gatherRow(ctx, sherlockGather);
  footnote(footnotes, sherlockGather.how);
  const keys = new Set(['pages', 's', 'pagesPerS', 'cpuMsPerPage', 'rss']);
  return [
    simWeb,
    {
      id: 'crawl-scale-site',
      title: `Crawl scale — processor time per page on the ${ctx.opts.set} site`,
      subtitle: `The gathering table's crawls of the ${ctx.layout.hosts.length} hosts, in the same run as the simulated web; medians of ${ctx.opts.runs} run(s). CPU: user + system time of the crawler's processes (GNU time) ÷ its pages.`,
      columns: GATHER_COLUMNS.filter((c) => keys.has(c.key)),
      ratios: GATHER_RATIOS,
      peers,
      sherlock,
      notes: [],
    },
  ];
}

// ------------------------------------------------------------ URL database

/** One run per entry: at 10 million URLs a run takes minutes (bench/urldb-workload.ts). */
async function urlDbRow(ctx: BenchContext, entry: UrlDbEntry, scale: UrlDbScale): Promise<Row> {
  const skip = await availability(ctx, entry);
  if (skip !== undefined) return skip;
  try {
    const dir = join(ctx.workDir, 'run', 'urldb');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const r = await entry.load(ctx, dir, scale);
    rmSync(dir, { recursive: true, force: true });
    const s = (ms: number) => ms / 1000;
    log(
      `  ${entry.name}: inject ${s(r.inject.wallMs).toFixed(1)} s (CPU ${s(r.inject.cpuMs).toFixed(1)} s), ` +
        `plan ${s(r.plan.wallMs).toFixed(2)} s (CPU ${s(r.plan.cpuMs).toFixed(2)} s), merge ${s(r.merge.wallMs).toFixed(2)} s (CPU ${s(r.merge.cpuMs).toFixed(2)} s), ` +
        `${(r.sizeBytes / MIB).toFixed(0)} MiB, peak RSS ${r.peakRss === undefined ? '?' : (r.peakRss / MIB).toFixed(0) + ' MiB'}`,
    );
    return rowFrom(entry.name, [
      {
        urls: r.urls,
        injectPerS: r.urls / s(r.inject.wallMs),
        injectPerCpuS: r.urls / s(r.inject.cpuMs),
        planS: s(r.plan.wallMs),
        planCpuS: s(r.plan.cpuMs),
        mergeS: s(r.merge.wallMs),
        mergeCpuS: s(r.merge.cpuMs),
        size: r.sizeBytes,
        rss: r.peakRss,
      },
    ]);
  } catch (err) {
    log(`  ${entry.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    return { name: entry.name, status: 'failed', message: firstLine(err) };
  }
}

async function urlDbTable(ctx: BenchContext, footnotes: string[]): Promise<Table> {
  const scale = urlDbScale(ctx);
  log(`URL database: ${sqliteUrlTable.name}`);
  const peer = await urlDbRow(ctx, sqliteUrlTable, scale);
  footnotes.push(sqliteUrlTable.how);
  log(`URL database: ${sherlockUrlDb.name}`);
  const sherlock = await urlDbRow(ctx, sherlockUrlDb, scale);
  footnotes.push(sherlockUrlDb.how);
  const n = (x: number) => x.toLocaleString('en');
  return {
    id: 'urldb',
    title: 'URL database — synthetic URLs at scale',
    subtitle:
      `${n(scale.urls)} synthetic URLs on ${n(scale.sites)} sites (bench/urldb-workload.ts${ctx.opts.set === 'small' ? '; --quick: a tenth of the full 10,000,000 on 100,000' : ''}), ` +
      `injected ${n(INJECT_BATCH)} per transaction; then ${n(PLAN_SIZE)} new URLs planned and their fetch results merged; one run each. ` +
      'CPU: user + system time of the process in that phase (the machine is shared; wall time includes waiting for the disk and for other load).',
    columns: [
      { key: 'urls', label: 'URLs', format: 'int' },
      { key: 'injectPerS', label: 'inject URLs/s', format: 'int' },
      { key: 'injectPerCpuS', label: 'inject URLs/CPU s', format: 'int' },
      { key: 'planS', label: `plan ${PLAN_SIZE / 1000}k s`, format: 's' },
      { key: 'planCpuS', label: 'plan CPU s', format: 's' },
      { key: 'mergeS', label: `merge ${PLAN_SIZE / 1000}k s`, format: 's' },
      { key: 'mergeCpuS', label: 'merge CPU s', format: 's' },
      { key: 'size', label: 'size MiB', format: 'mib' },
      { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
    ],
    ratios: [
      { key: 'injectPerS', label: 'inject URLs/s', better: 'higher' },
      { key: 'planS', label: 'plan', better: 'lower' },
      { key: 'mergeS', label: 'merge', better: 'lower' },
    ],
    peers: [peer],
    sherlock,
    notes: [
      'Targets (issue 5): inject ≥ 100,000 URLs/s, plan and merge of 100,000 under 5 s each, peak RSS under 1 GiB, at 10,000,000 URLs on 100,000 sites.',
    ],
  };
}

// ------------------------------------------------------ indexing, searching

/** A searching row from an engine's (or floor's) latencies; progress lines on stderr. */
function searchRow(name: string, r: SearchResult): Row {
  const lat = r.latenciesMs;
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length;
  // A peer is timed in its process: its latencies are its in-process figures. Rows over WebSocket (they have a load figure) have none of their own.
  const rank = r.inProcess?.rankMs ?? (r.concurrent === undefined ? lat : undefined);
  const whole = r.inProcess?.searchMs ?? rank;
  if (r.inProcess !== undefined) {
    log(`  ${name} in process: ranked median ${median(r.inProcess.rankMs).toFixed(3)} ms, p99 ${percentile(r.inProcess.rankMs, 99).toFixed(3)} ms; whole median ${median(r.inProcess.searchMs).toFixed(3)} ms, p99 ${percentile(r.inProcess.searchMs, 99).toFixed(3)} ms`);
  }
  if (r.concurrent !== undefined) {
    const c = r.concurrent;
    log(`  ${name} under load (${c.clients}×${c.depth}): ${(c.latenciesMs.length / c.seconds).toFixed(0)} queries/s, median ${median(c.latenciesMs).toFixed(3)} ms, p99 ${percentile(c.latenciesMs, 99).toFixed(3)} ms`);
  }
  log(`  ${name} search: median ${median(lat).toFixed(3)} ms, p99 ${percentile(lat, 99).toFixed(3)} ms, ${r.zeroHits} without hits`);
  return {
    name,
    status: 'ok',
    values: {
      queries: lat.length,
      median: median(lat),
      p99: percentile(lat, 99),
      qps: 1000 / mean,
      ...(r.concurrent === undefined
        ? {}
        : { loadQps: r.concurrent.latenciesMs.length / r.concurrent.seconds, loadP99: percentile(r.concurrent.latenciesMs, 99) }),
      ...(rank === undefined ? {} : { rankMedian: median(rank), rankP99: percentile(rank, 99) }),
      ...(whole === undefined ? {} : { wholeMedian: median(whole), wholeP99: percentile(whole, 99) }),
      zero: r.zeroHits,
      ...(r.startupMs === undefined ? {} : { startup: r.startupMs / 1000 }),
      ...(r.peakRss === undefined ? {} : { rss: r.peakRss }),
    },
  };
}

/** One door's row of the HTTP-beside-WebSocket table: latency one at a time and under the load. */
function doorRow(name: string, latenciesMs: readonly number[], concurrent: NonNullable<SearchResult['concurrent']>): Row {
  const mean = latenciesMs.reduce((a, b) => a + b, 0) / latenciesMs.length;
  const loadQps = concurrent.latenciesMs.length / concurrent.seconds;
  log(`  ${name}: median ${median(latenciesMs).toFixed(3)} ms, p99 ${percentile(latenciesMs, 99).toFixed(3)} ms; under load ${loadQps.toFixed(0)} queries/s, p99 ${percentile(concurrent.latenciesMs, 99).toFixed(3)} ms`);
  return {
    name,
    status: 'ok',
    values: { queries: latenciesMs.length, median: median(latenciesMs), p99: percentile(latenciesMs, 99), qps: 1000 / mean, loadQps, loadMedian: median(concurrent.latenciesMs), loadP99: percentile(concurrent.latenciesMs, 99) },
  };
}

/** sherlock's searcher over its JSON API beside its WebSocket, the same server, queries and load. */
function doorsTable(ctx: BenchContext, scope: EngineScope, r: SearchResult): Table | undefined {
  if (r.http === undefined || r.concurrent === undefined) return undefined;
  const load = `${WS_CLIENTS}×${WS_DEPTH} in flight`;
  return {
    id: `search-http${scope.id}`,
    title: `Searching — ${scope.of}: JSON over HTTP beside the WebSocket`,
    subtitle:
      `sherlock's searcher, the same server process and query set (${ctx.queries.length} queries, top 10), ${ctx.opts.passes} timed pass(es) after ${ctx.opts.warmup} warm-up pass(es); ` +
      'the ratio column is HTTP ÷ WebSocket.',
    columns: [
      { key: 'queries', label: 'timed queries', format: 'int' },
      { key: 'median', label: 'median ms', format: 'ms' },
      { key: 'p99', label: 'p99 ms', format: 'ms' },
      { key: 'qps', label: 'queries/s', format: 'int' },
      { key: 'loadQps', label: `queries/s, ${load}`, format: 'int' },
      { key: 'loadMedian', label: `median ms, ${load}`, format: 'ms' },
      { key: 'loadP99', label: `p99 ms, ${load}`, format: 'ms' },
    ],
    ratios: [
      { key: 'median', label: 'median', better: 'lower' },
      { key: 'loadQps', label: `queries/s, ${load}`, better: 'higher' },
      { key: 'loadP99', label: `p99, ${load}`, better: 'lower' },
    ],
    peers: [doorRow('WebSocket (sherlock.v1)', r.latenciesMs, r.concurrent)],
    sherlock: doorRow('JSON over HTTP (GET /api/search)', r.http.latenciesMs, r.http.concurrent),
    sherlockLabel: 'JSON over HTTP (GET /api/search)',
    notes: [
      `The WebSocket row is the searching table's sherlock row: one socket one query at a time, then ${WS_CLIENTS} sockets with ${WS_DEPTH} queries in flight each. ` +
        `The HTTP row sends the same queries as \`GET /api/search?q=…&limit=10\` through undici's keep-alive Pool: one connection one query at a time, then ${WS_CLIENTS * WS_DEPTH} connections with one query in flight each (HTTP/1.1 without pipelining), ` +
        'the same number of searches in flight; each answer is read whole and parsed. Both run against the searcher once it has answered the warm-up passes of the other.',
    ],
  };
}

async function engineRows(ctx: BenchContext, entry: EngineEntry, doIndex: boolean, doSearch: boolean): Promise<{ index: Row; search: Row; top?: string[][]; result?: SearchResult }> {
  const skip = await availability(ctx, entry);
  if (skip !== undefined) return { index: skip, search: skip };
  const slug = entry.name.split(' ')[0]!.toLowerCase().replace(/[^a-z0-9]/g, '');
  const indexDir = join(ctx.workDir, 'index', slug);
  let index: Row = { name: entry.name, status: 'unavailable', message: 'not run (--only)' };
  const builds: Array<Record<string, number | undefined>> = [];
  try {
    const times = doIndex ? ctx.opts.runs : 1;
    for (let i = 0; i < times; i++) {
      const r = await entry.build(ctx, indexDir);
      const s = r.wallMs / 1000;
      builds.push({
        docs: Number.isFinite(r.docs) ? r.docs : undefined,
        s,
        docsPerS: Number.isFinite(r.docs) ? r.docs / s : undefined,
        mibPerS: ctx.corpus.textBytes / MIB / s,
        size: r.sizeBytes,
        sizePct: (100 * r.sizeBytes) / ctx.corpus.textBytes,
        rss: r.peakRss,
      });
      log(`  ${entry.name} build ${i + 1}: ${s.toFixed(1)} s, ${(r.sizeBytes / MIB).toFixed(1)} MiB, docs ${r.docs}, peak RSS ${r.peakRss === undefined ? '?' : (r.peakRss / MIB).toFixed(0) + ' MiB'}`);
    }
    if (doIndex) index = rowFrom(entry.name, builds);
  } catch (err) {
    if (err instanceof NotBuiltError && err.availability !== true) {
      const row: Row = { name: entry.name, status: err.availability.status, message: err.availability.reason };
      return { index: row, search: row };
    }
    log(`  ${entry.name} build failed: ${err instanceof Error ? err.message : String(err)}`);
    const row: Row = { name: entry.name, status: 'failed', message: firstLine(err) };
    return { index: row, search: { ...row, message: 'no index: ' + firstLine(err) } };
  }
  let search: Row = { name: entry.name, status: 'unavailable', message: 'not run (--only)' };
  let top: string[][] | undefined;
  let result: SearchResult | undefined;
  if (doSearch && entry.search === undefined) search = { name: entry.name, status: 'unavailable', message: 'a floor for building: it answers no queries' };
  else if (doSearch && entry.search !== undefined) {
    try {
      const r: SearchResult = await entry.search(ctx, indexDir);
      top = r.top;
      result = r;
      search = searchRow(entry.name, r);
    } catch (err) {
      if (err instanceof NotBuiltError && err.availability !== true) {
        search = { name: entry.name, status: err.availability.status, message: err.availability.reason };
      } else {
        log(`  ${entry.name} search failed: ${err instanceof Error ? err.message : String(err)}`);
        search = { name: entry.name, status: 'failed', message: firstLine(err) };
      }
    }
  }
  return { index, search, ...(top === undefined ? {} : { top }), ...(result === undefined ? {} : { result }) };
}

/** Which peers an engine table has and what it is of: the site's text, or a scale run's documents. */
interface EngineScope {
  peers: EngineEntry[];
  /** What the tables are of, in their titles. */
  of: string;
  /** Appended to the tables' ids. */
  id: string;
  /** The bare ws server's row under the searching table. */
  bareWs: boolean;
  /** The bare search loop's row under it (scale runs). */
  bareSearch: boolean;
}

function siteScope(): EngineScope {
  return { peers: [fts5(), lucene(), xapian(), bareIndexer()], of: 'the extracted text of the site', id: '', bareWs: true, bareSearch: false };
}

/** Footnotes are said once, however many tables they are under. */
function footnote(footnotes: string[], line: string): void {
  if (!footnotes.includes(line)) footnotes.push(line);
}

async function engineTables(ctx: BenchContext, doIndex: boolean, doSearch: boolean, footnotes: string[], scope: EngineScope = siteScope()): Promise<Table[]> {
  const { peers } = scope;
  const luceneEntry = peers.find((entry) => entry.name.startsWith('Lucene'));
  const indexRows: Row[] = [];
  const searchRows: Row[] = [];
  let luceneTop: string[][] | undefined;
  for (const entry of peers) {
    log(`indexing/searching: ${entry.name}`);
    const r = await engineRows(ctx, entry, doIndex, doSearch);
    indexRows.push(r.index);
    searchRows.push(r.search);
    if (entry === luceneEntry) luceneTop = r.top;
    footnote(footnotes, entry.how);
  }
  log(`indexing/searching: ${sherlockEngine.name}`);
  const s = await engineRows(ctx, sherlockEngine, doIndex, doSearch);
  footnote(footnotes, sherlockEngine.how);
  // The floors run after sherlock's searcher: the bare ws server repeats its answers, the bare search loop reads its index.
  const floors = [...(scope.bareWs ? [bareWs] : []), ...(scope.bareSearch ? [bareSearch] : [])];
  for (const floor of s.search.status === 'ok' ? floors : []) {
    log(`searching: ${floor.name}`);
    try {
      searchRows.push(searchRow(floor.name, await floor.search(ctx)));
    } catch (err) {
      log(`  ${floor.name} failed: ${err instanceof Error ? err.message : String(err)}`);
      searchRows.push({ name: floor.name, status: 'failed', message: firstLine(err) });
    }
    footnote(footnotes, floor.how);
  }
  let overlapNote = 'Top-10 overlap with Lucene: not measured (Lucene or sherlock gave no hit lists).';
  if (luceneTop !== undefined && s.top !== undefined && s.search.status === 'ok') {
    // By host and path: a crawl state reused from a run on another --port names the same pages with that port.
    const page = (url: string): string => {
      const u = new URL(url);
      return u.hostname + u.pathname + u.search;
    };
    const pages = (top: string[][]): string[][] => top.map((urls) => urls.map(page));
    const { overlap, queries } = topOverlap(pages(s.top), pages(luceneTop));
    s.search = { ...s.search, values: { ...s.search.values, overlap } };
    overlapNote =
      `Top-10 overlap with Lucene (sherlock's row): per query, the URLs in both top 10s ÷ 10, or ÷ the shorter list when either has fewer than 10 hits; ` +
      `the mean over the ${queries} queries with hits in both; URLs compared by host and path. sherlock's top 10 is the page the WebSocket returns (site collapsing included).`;
    log(`  top-10 overlap with Lucene: ${overlap.toFixed(3)} over ${queries} queries`);
  }
  const textMiB = (ctx.corpus.textBytes / MIB).toFixed(1);
  const tables: Table[] = [];
  if (doIndex) {
    tables.push({
      id: `index${scope.id}`,
      title: `Indexing — ${scope.of}`,
      subtitle: `${ctx.corpus.pages.toLocaleString('en')} pages, ${textMiB} MiB of extracted text (title and body); medians of ${ctx.opts.runs} build(s), each a fresh process (wall time, start-up included).`,
      columns: [
        { key: 'docs', label: 'docs', format: 'int' },
        { key: 's', label: 'build s', format: 's' },
        { key: 'docsPerS', label: 'docs/s', format: 'int' },
        { key: 'mibPerS', label: 'text MiB/s', format: 'dec2' },
        { key: 'size', label: 'index MiB', format: 'mib' },
        { key: 'sizePct', label: 'index / text %', format: 'dec1' },
        { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
      ],
      ratios: [
        { key: 's', label: 'build time', better: 'lower' },
        { key: 'size', label: 'index size', better: 'lower' },
      ],
      peers: indexRows,
      sherlock: s.index,
      notes: ['Every engine but the bare floor stores url, title and body (what a result page with snippets needs) and merges its index into one piece at the end.'],
    });
  }
  if (doSearch) {
    const kinds = new Map<string, number>();
    for (const q of ctx.queries) kinds.set(q.kind, (kinds.get(q.kind) ?? 0) + 1);
    tables.push({
      id: `search${scope.id}`,
      title: `Searching — ${scope.of}: the query set, top 10 hits`,
      subtitle:
        `${ctx.queries.length} queries (${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')}; ${relative(repoRoot, ctx.queryFile)}), ` +
        `one at a time, ${ctx.opts.warmup} untimed warm-up pass(es) then ${ctx.opts.passes} timed pass(es); latency of each query inside the engine's process.`,
      columns: [
        { key: 'queries', label: 'timed queries', format: 'int' },
        { key: 'median', label: 'median ms', format: 'ms' },
        { key: 'p99', label: 'p99 ms', format: 'ms' },
        { key: 'qps', label: 'queries/s', format: 'int' },
        { key: 'loadQps', label: `queries/s, ${WS_CLIENTS}×${WS_DEPTH} in flight`, format: 'int' },
        { key: 'loadP99', label: `p99 ms, ${WS_CLIENTS}×${WS_DEPTH} in flight`, format: 'ms' },
        { key: 'rankMedian', label: 'in-process median ms, ranked', format: 'ms' },
        { key: 'rankP99', label: 'in-process p99 ms, ranked', format: 'ms' },
        { key: 'wholeMedian', label: 'in-process median ms, with snippets', format: 'ms' },
        { key: 'wholeP99', label: 'in-process p99 ms, with snippets', format: 'ms' },
        { key: 'zero', label: 'queries without hits', format: 'int' },
        { key: 'overlap', label: 'top-10 overlap with Lucene', format: 'dec2' },
        { key: 'startup', label: 'server start-up s', format: 'dec2' },
        { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
      ],
      ratios: [
        { key: 'median', label: 'median', better: 'lower' },
        { key: 'p99', label: 'p99', better: 'lower' },
        { key: 'loadQps', label: `queries/s, ${WS_CLIENTS}×${WS_DEPTH} in flight`, better: 'higher' },
        { key: 'rankMedian', label: 'in-process median, ranked', better: 'lower' },
        { key: 'rankP99', label: 'in-process p99, ranked', better: 'lower' },
      ],
      peers: searchRows,
      sherlock: s.search,
      notes: [
        'sherlock is measured over its WebSocket protocol (a round trip on loopback included, hits with snippets); the peers in-process. ' +
          'The in-process columns time sherlock inside one process too (`sherlock search --bench-queries`): ranked = matching, totals, top 10 and facets, ' +
          'as the peers return url and title; with snippets = the whole result the WebSocket sends. For the peers they repeat their own figures. ' +
          `The "${WS_CLIENTS}×${WS_DEPTH} in flight" columns are sherlock's throughput under load: ${WS_CLIENTS} WebSockets from one client process, each keeping ${WS_DEPTH} queries in flight, ` +
          "sending the same timed passes between them; queries/s = queries answered ÷ wall time of the whole load, p99 = send to result of each query under that load. The engine peers have no server to load; the bare ws server's row is the same client against a server that only repeats sherlock's recorded answers.",
        overlapNote,
      ],
    });
    const doors = s.result === undefined || s.search.status !== 'ok' ? undefined : doorsTable(ctx, scope, s.result);
    if (doors !== undefined) tables.push(doors);
  }
  return tables;
}

// -------------------------------------------------------------------- scale

/**
 * The scale part (issue 31): for each size of `--scale`, the generated
 * documents (scale-corpus.ts) indexed and searched by sherlock, Lucene and
 * SQLite FTS5 (within the peers' time box: an hour's build, half an hour's
 * searches; past it, its row says it failed),
 * the query set drawn from them as the site's is; then how build time,
 * index size and the in-process p99 grow between two sizes.
 */
async function scaleTables(ctx: BenchContext, footnotes: string[]): Promise<Table[]> {
  const tables: Table[] = [];
  const measured: Array<{ docs: number; rows: Row[] }> = [];
  for (const docs of ctx.opts.scale) {
    const corpus = await ensureScaleCorpus(join(repoRoot, 'bench', 'work'), ctx.corpus.textFile, docs, log);
    const queryFile = join(corpus.dir, 'queries.tsv');
    const queries = loadOrGenerate(queryFile, corpus.textFile, `scale-${docs}`, false, log);
    const scaled: BenchContext = {
      ...ctx,
      workDir: corpus.dir,
      corpus: { ...ctx.corpus, dir: dirname(corpus.textFile), textFile: corpus.textFile, pages: docs, textBytes: corpus.textBytes },
      queries,
      queryFile,
    };
    const label = docs.toLocaleString('en');
    const made = await engineTables(scaled, true, true, footnotes, { peers: [fts5(), lucene()], of: `${label} generated documents on ${corpus.hosts.toLocaleString('en')} hosts`, id: `-scale-${docs}`, bareWs: false, bareSearch: true });
    tables.push(...made);
    const [index, search] = made;
    tables.push(...(await scaleExportTables(scaled, docs, footnotes)));
    tables.push(await swapTable(scaled, corpus, index!.sherlock.values?.['s'], footnotes));
    measured.push({ docs, rows: [...index!.peers, index!.sherlock].map((row, k) => ({ ...row, values: { ...row.values, ...prefixed(k < index!.peers.length ? search!.peers[k]!.values : search!.sherlock.values) } })) });
  }
  footnote(footnotes, `Scale: ${SCALE_HOW}`);
  if (measured.length > 1) tables.push(growthTable(measured));
  return tables;
}

/** `sherlock export cdx` and `export nutch` of a scale state, one run each: no peer reads our ARC files and URL database. */
async function scaleExportTables(ctx: BenchContext, docs: number, footnotes: string[]): Promise<Table[]> {
  const tables: Table[] = [];
  const what = {
    cdx: 'CDX of its ARC records',
    nutch: `Nutch crawl directory: the crawldb of its ${(docs * (1 + UNFETCHED_PER_DOC)).toLocaleString('en')} URLs, a segment and the linkdb of the fetched documents`,
  };
  for (const format of ['cdx', 'nutch'] as const) {
    const entry = sherlockExport(format);
    log(`scale exports: ${entry.name}`);
    const sherlock = await exportRow(ctx, entry, 1);
    footnote(footnotes, entry.how);
    tables.push({
      id: `export-${format}-scale-${docs}`,
      title: `Exports — ${format === 'cdx' ? 'CDX' : 'Nutch'} of the scale state of ${docs.toLocaleString('en')} documents`,
      subtitle: `${what[format]}; one run.`,
      columns: EXPORT_COLUMNS,
      ratios: [],
      peers: [],
      sherlock,
      notes: [],
    });
  }
  return tables;
}

const SWAP_COLUMNS: Column[] = [
  { key: 'added', label: 'documents added', format: 'int' },
  { key: 'rebuildS', label: 'daemon rebuild s', format: 's' },
  { key: 'ofFull', label: 'rebuild ÷ full build', format: 'dec2' },
  { key: 'loadMs', label: 'searcher load ms', format: 'ms' },
  { key: 'visibleS', label: 'published → served s', format: 's' },
  { key: 'answered', label: 'queries during', format: 'int' },
  { key: 'failed', label: 'failed', format: 'int' },
  { key: 'p99Before', label: 'p99 before ms', format: 'ms' },
  { key: 'p99During', label: 'p99 during ms', format: 'ms' },
];

/** The daemon's rebuild with 1 % new documents and the searcher's swap, under load (scale-swap.ts); `fullS`: the full build's time in the same run. */
async function swapTable(ctx: BenchContext, corpus: ScaleCorpus, fullS: number | undefined, footnotes: string[]): Promise<Table> {
  const label = corpus.docs.toLocaleString('en');
  footnote(footnotes, `Rebuild and swap: ${SWAP_HOW}`);
  let sherlock: Row;
  try {
    const r = await rebuildUnderLoad(ctx, corpus, log);
    const values: Record<string, number> = { added: r.added, rebuildS: r.rebuildS, visibleS: r.visibleS, answered: r.during.answered, failed: r.during.failed, p99Before: r.before.p99, p99During: r.during.p99 };
    if (fullS !== undefined) values['ofFull'] = r.rebuildS / fullS;
    if (r.loadMs !== undefined) values['loadMs'] = r.loadMs;
    sherlock = { name: 'sherlock indexer run + searcher', status: 'ok', values, message: `cards ${r.cardsBefore.toLocaleString('en')} → ${r.cardsAfter.toLocaleString('en')}; ${r.before.answered} queries in the 2 s before the daemon started (after 2 s of warm-up)` };
  } catch (err) {
    sherlock = { name: 'sherlock indexer run + searcher', status: 'failed', message: String(err instanceof Error ? err.message : err) };
  }
  return {
    id: `swap-scale-${corpus.docs}`,
    title: `Scale — rebuild with 1 % new documents and the swap under load, ${label} documents`,
    subtitle: 'The indexer daemon builds the whole index again (no incremental path yet); the searcher keeps answering and swaps when it sees the new version.',
    columns: SWAP_COLUMNS,
    ratios: [],
    peers: [],
    sherlock,
    notes: [],
  };
}

const SWAP_HOW =
  'on a copy of the scale state (files hard-linked, the bucket file copied), `sherlock searcher run` answers the query set from 4 WebSockets, one query at a time each, without pause; ' +
  'N ÷ 100 new documents (made as the corpus\'s are) are appended to the bucket file, then `sherlock indexer run` (poll 100 ms, rebuild_documents = their number) is started: ' +
  '"daemon rebuild" is its spawn to its "index version published" line, "searcher load" the searcher\'s own log of opening and checking the new version, ' +
  '"published → served" the time to the first status event naming it (the searcher looks at `current` every 5 s), and every query answered from the daemon\'s start to 2 s after the swap counts; none may fail.';

const SCALE_HOW =
  'bench/scale-corpus.ts makes N documents from the set\'s extracted pages (passages of 40–160 words cut at sentence ends, 2–14 a document; ' +
  'titles from the pages\' titles; N/100 hosts drawn by a power law; 3 % exact and 3 % near copies; 4–24 links a document to targets drawn by a power law, ' +
  "their titles' first words as anchor text), written as ARC records of their HTML pages and the gatherer's buckets for sherlock and as text.tsv for Lucene, with the URL database a crawl of that size has (a fetched row per document, ten unfetched URLs per document); sherlock indexes the buckets without a crawl.";

/** A search row's values under keys of their own ("search." + key). */
function prefixed(values: Readonly<Record<string, number>> | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(values ?? {}).map(([key, value]) => [`search.${key}`, value]));
}

/** k of time ∝ N^k between each two sizes, per engine, for build time, index size and in-process p99. */
function growthTable(measured: Array<{ docs: number; rows: Row[] }>): Table {
  const metrics = [
    ['s', 'build time'],
    ['size', 'index size'],
    ['rss', 'build peak RSS'],
    ['search.rankP99', 'ranked p99'],
  ] as const;
  const columns: Column[] = [];
  for (let k = 1; k < measured.length; k++) {
    for (const [key, label] of metrics) columns.push({ key: `${key}@${k}`, label: `${label}, ${measured[k - 1]!.docs.toLocaleString('en')}→${measured[k]!.docs.toLocaleString('en')}`, format: 'dec2' });
  }
  const rowOf = (r: number): Row => {
    const values: Record<string, number> = {};
    for (let k = 1; k < measured.length; k++) {
      const before = measured[k - 1]!;
      const after = measured[k]!;
      for (const [key] of metrics) {
        const a = before.rows[r]?.values?.[key];
        const b = after.rows[r]?.values?.[key];
        // Lucene's in-process p99 is its own latency column.
        const from = key === 'search.rankP99' && a === undefined ? before.rows[r]?.values?.['search.p99'] : a;
        const to = key === 'search.rankP99' && b === undefined ? after.rows[r]?.values?.['search.p99'] : b;
        if (from !== undefined && to !== undefined && from > 0 && to > 0) values[`${key}@${k}`] = Math.log(to / from) / Math.log(after.docs / before.docs);
      }
    }
    const name = measured[0]!.rows[r]!.name;
    return Object.keys(values).length === 0 ? { name, status: 'failed', message: 'a size without figures' } : { name, status: 'ok', values };
  };
  const last = measured[0]!.rows.length - 1;
  return {
    id: 'scale-growth',
    title: 'Scale — growth between sizes',
    subtitle: 'k of figure ∝ N^k between two sizes: 1 is linear; the issue asks ≤ 1.1 for the build from 100k to 1M.',
    columns,
    ratios: [],
    peers: Array.from({ length: last }, (_, r) => rowOf(r)),
    sherlock: rowOf(last),
    notes: [],
  };
}

// ------------------------------------------------------------------ exports

const EXPORT_COLUMNS: Column[] = [
  { key: 'records', label: 'records', format: 'int' },
  { key: 's', label: 'time s', format: 's' },
  { key: 'recordsPerS', label: 'records/s', format: 'int' },
  { key: 'out', label: 'output MiB', format: 'mib' },
  { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
];
const EXPORT_RATIOS: RatioSpec[] = [{ key: 'recordsPerS', label: 'records/s', better: 'higher' }];

async function exportRow(ctx: BenchContext, entry: ExportEntry, count = ctx.opts.runs): Promise<Row> {
  const skip = await availability(ctx, entry);
  if (skip !== undefined) return skip;
  const runs: Array<Record<string, number | undefined>> = [];
  try {
    for (let i = 0; i < count; i++) {
      const r = await entry.export(ctx, join(ctx.workDir, 'run', 'export'));
      const s = r.wallMs / 1000;
      runs.push({
        records: Number.isFinite(r.records) ? r.records : undefined,
        s,
        recordsPerS: Number.isFinite(r.records) ? r.records / s : undefined,
        out: r.outBytes,
        mbPerS: r.outBytes / 1e6 / s,
        rss: r.peakRss,
      });
    }
  } catch (err) {
    log(`  ${entry.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    return { name: entry.name, status: 'failed', message: firstLine(err) };
  }
  return rowFrom(entry.name, runs);
}

async function exportTable(ctx: BenchContext, footnotes: string[]): Promise<Table> {
  log(`exports: ${warcioCdx.name}`);
  const peer = await exportRow(ctx, warcioCdx);
  footnotes.push(warcioCdx.how);
  const cdx = sherlockExport('cdx');
  log(`exports: ${cdx.name}`);
  const sherlock = await exportRow(ctx, cdx);
  footnotes.push(cdx.how);
  let deflate: string;
  try {
    log('exports: the libdeflate binding against node:zlib');
    deflate = await deflatePathEffect(ctx);
  } catch (err) {
    deflate = `libdeflate binding against node:zlib: failed: ${firstLine(err)}`;
  }
  log(deflate);
  return {
    id: 'export',
    title: 'Exports — CDX of the crawl',
    subtitle: `11-field CDX of every archived response of a crawl of the site (the peer: a wget crawl's WARC files; sherlock: its own crawl's ARC files); medians of ${ctx.opts.runs} run(s).`,
    columns: EXPORT_COLUMNS,
    ratios: EXPORT_RATIOS,
    peers: [peer],
    sherlock,
    notes: ['WARC and Nutch exports plug in the same way (`sherlockExport("warc" | "nutch")` in bench/sherlock.ts) once a peer for them is chosen.', deflate],
  };
}

/** Issue 9's measurement: CDX of a generated ARC set, one run each (the set takes minutes). */
async function arcSetTable(ctx: BenchContext, footnotes: string[]): Promise<Table> {
  const records = arcSetSize(ctx);
  const peerEntry = warcioArcSetCdx(ctx);
  log(`exports: ${peerEntry.name}`);
  const peer = await exportRow(ctx, peerEntry, 1);
  footnotes.push(peerEntry.how);
  log(`exports: ${sherlockArcSetCdx.name}`);
  const sherlock = await exportRow(ctx, sherlockArcSetCdx, 1);
  footnotes.push(sherlockArcSetCdx.how);
  return {
    id: 'export-arc-set',
    title: `Exports — CDX of a generated ARC set (${records.toLocaleString('en')} records)`,
    subtitle: 'ARC files written by sherlock’s ARC writer (bench/arc-set.ts); sherlock indexes them and sorts; warcio.js indexes the WARC export of the same records. One run each. Target: ≥ 100,000 records/s, peak RSS < 300 MB.',
    columns: EXPORT_COLUMNS,
    ratios: EXPORT_RATIOS,
    peers: [peer],
    sherlock,
    notes: ['warcio.js reads WARC only (it misreads ARC silently), so it indexes the WARC export of the same captures; it does not sort.'],
  };
}

/** Issue 29's measurement: the archive import of the generated set's WARC export next to warcio.js reading it, one run each. */
async function importTable(ctx: BenchContext, footnotes: string[]): Promise<Table> {
  const records = arcSetSize(ctx);
  const peerEntry = warcioArchiveRead(ctx);
  log(`import: ${peerEntry.name}`);
  const peer = await exportRow(ctx, peerEntry, 1);
  footnotes.push(peerEntry.how);
  log(`import: ${parseFloor.name}`);
  const floor = await exportRow(ctx, parseFloor, 1);
  footnotes.push(parseFloor.how);
  log(`import: ${sherlockArchiveImport.name}`);
  const sherlock = await exportRow(ctx, sherlockArchiveImport, 1);
  footnotes.push(sherlockArchiveImport.how);
  return {
    id: 'import-archive',
    title: `Import — WARC files of a generated set (${records.toLocaleString('en')} records)`,
    subtitle: 'The WARC export of bench/arc-set.ts’s set: sherlock imports it (each capture parsed as a fetch, a bucket appended), warcio.js indexes it. One run each. Target: ≥ 2× warcio.js’s records/s, peak RSS < 300 MB.',
    columns: [
      { key: 'records', label: 'records', format: 'int' },
      { key: 's', label: 'time s', format: 's' },
      { key: 'recordsPerS', label: 'records/s', format: 'int' },
      { key: 'mbPerS', label: 'MB/s read', format: 'dec1' },
      { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
    ],
    ratios: EXPORT_RATIOS,
    peers: [peer, floor],
    sherlock,
    notes: ['warcio.js only reads, inflates and digests; the import also parses every page (HTML, charset, language), which is most of its time: the floor row is that parse alone on one thread.'],
  };
}

/** The Nutch export of a synthetic crawl state (bench/nutch-state.ts), one run (the state takes minutes to make). */
async function nutchTable(ctx: BenchContext, footnotes: string[]): Promise<Table> {
  const entry = sherlockNutchExport(ctx);
  log(`exports: ${entry.name}`);
  const sherlock = await exportRow(ctx, entry, 1);
  footnotes.push(entry.how);
  return {
    id: 'export-nutch',
    title: `Exports — Nutch crawl directory of a synthetic crawl (${nutchStateSize(ctx).toLocaleString('en')} URLs)`,
    subtitle: 'crawldb of every URL, one segment and the linkdb of the fetched tenth (bench/nutch-state.ts). One run. Target: ≥ 50 MB/s written, peak RSS < 300 MB.',
    columns: [
      { key: 'records', label: 'URLs', format: 'int' },
      { key: 's', label: 'time s', format: 's' },
      { key: 'out', label: 'written MiB', format: 'mib' },
      { key: 'mbPerS', label: 'MB/s written', format: 'dec1' },
      { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
    ],
    ratios: [],
    peers: [],
    sherlock,
    notes: ['No peer: Nutch itself needs a JVM and Hadoop, which the bench machine does not have.'],
  };
}

// --------------------------------------------------------------------- main

function machineLine(): string {
  const cpu = cpus();
  return `${cpu.length} cores (${cpu[0]?.model.trim() ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${osType()} ${release()}`;
}

function recordInDocs(report: string): void {
  const file = join(repoRoot, 'docs', 'benchmarks.md');
  const begin = '<!-- bench:begin -->';
  const end = '<!-- bench:end -->';
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) {
    log('docs/benchmarks.md has no bench:begin/bench:end markers; not recorded');
    return;
  }
  writeFileSync(file, text.slice(0, a + begin.length) + '\n' + report.replace(/^## sherlock benchmark\n/, '').trim() + '\n' + text.slice(b));
  log('recorded in docs/benchmarks.md');
}

async function main(): Promise<void> {
  let opts: BenchOptions | 'help';
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (opts === 'help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const selected = (p: PartId): boolean => opts.only.length === 0 || opts.only.includes(p);
  const workDir = join(repoRoot, 'bench', 'work', opts.set);
  mkdirSync(workDir, { recursive: true });
  log(`set ${opts.set}, ${opts.runs} run(s), ${opts.warmup}+${opts.passes} search passes; work dir ${workDir}`);

  // Debian packages: the corpus and the tools.
  const corpusPkgs = packagesOf(opts.set).map((p) => p.pkg);
  const needed = [...TOOL_PACKAGES, ...corpusPkgs];
  if (opts.noInstall) {
    const missing = needed.filter((p) => !isInstalled(p));
    if (missing.length > 0) throw new Error(`missing Debian packages (and --no-install): ${missing.join(' ')}`);
  } else {
    ensurePackages(needed, log);
    try {
      ensurePackages(OPTIONAL_TOOL_PACKAGES, log);
    } catch (err) {
      log(`optional ${OPTIONAL_TOOL_PACKAGES.join(' ')} not installed: ${firstLine(err)}`);
    }
  }
  if (selected('relevance')) relevancePackages(opts, log);

  const layout = buildLayout(opts.set, opts.port);
  if (!(await portFree(opts.port, [HUB_ADDRESS, ...layout.hosts.map((h) => h.address)]))) {
    throw new Error(`port ${opts.port} is taken on a loopback address; pick another with --port`);
  }
  const versions = Object.fromEntries(corpusPkgs.map((p) => [p, packageVersion(p)]));
  const key = JSON.stringify({ set: opts.set, versions, hosts: layout.hosts, port: layout.port });
  const corpus = extractCorpus(layout, join(workDir, 'corpus'), key, log);
  const queryDir = join(repoRoot, 'bench', 'queries');
  mkdirSync(queryDir, { recursive: true });
  const queryFile = join(queryDir, `${opts.set}.tsv`);
  const queries = loadOrGenerate(queryFile, corpus.textFile, opts.set, opts.newQueries, log);
  const seeds = layout.hosts.map((h) => hostUrl(layout, h.address, h.entry));
  const seedsFile = join(workDir, 'seeds.txt');
  writeFileSync(seedsFile, seeds.join('\n') + '\n');

  const ctx: BenchContext = { opts, repoRoot, distDir, workDir, layout, corpus, queries, queryFile, seedsFile, seeds, server: undefined, log };
  const tables: Table[] = [];
  const footnotes: string[] = [];
  const needServer = selected('gather') || selected('index') || selected('search') || selected('relevance') || selected('export') || selected('crawl-scale') || selected('result-cache') || selected('suggest');
  try {
    if (needServer) {
      const bound = opts.set === 'large' ? 4 * 3600 : 2 * 3600;
      ctx.server = await startServer(layout, workDir, distDir, bound);
      log(`site server pid ${ctx.server.pid}: ${layout.hosts.length} hosts on 127.0.0.2–${layout.hosts[layout.hosts.length - 1]!.address}:${layout.port}, hub http://${HUB_ADDRESS}:${layout.port}/`);
    }
    if (selected('gather')) {
      await warmSite(ctx);
      tables.push(await gatheringTable(ctx, footnotes));
    }
    if (selected('urldb')) tables.push(await urlDbTable(ctx, footnotes));
    if (selected('index') || selected('search')) tables.push(...(await engineTables(ctx, selected('index'), selected('search'), footnotes)));
    // The index and search parts both (re)build sherlock's index of the set; otherwise the relevance part builds it.
    if (selected('relevance')) tables.push(...(await relevanceTables(ctx, selected('index') || selected('search'), footnotes)));
    if (selected('export')) tables.push(await exportTable(ctx, footnotes), await arcSetTable(ctx, footnotes));
    if (selected('nutch')) tables.push(await nutchTable(ctx, footnotes));
    if (selected('import')) tables.push(await importTable(ctx, footnotes));
    if (selected('pdf')) tables.push(await pdfTable(ctx, footnotes));
    if (selected('crawl-scale')) tables.push(...(await crawlScaleTables(ctx, footnotes)));
    if (selected('result-cache')) tables.push(await resultCacheTable(ctx, log));
    if (selected('suggest')) tables.push(await suggestTable(ctx, log));
    if (selected('scale') && opts.scale.length > 0) {
      const scale = await scaleTables(ctx, footnotes);
      tables.push(...scale);
      // The scale part is CI's smoke test of its harness: a sherlock row that failed fails the run (after the report).
      const broken = scale.filter((t) => t.sherlock.status === 'failed').map((t) => `${t.title}: ${t.sherlock.message ?? ''}`);
      if (broken.length > 0) {
        log(`scale: sherlock failed in ${broken.join('; ')}`);
        process.exitCode = 1;
      }
    }
  } finally {
    await ctx.server?.stop();
    ctx.server = undefined;
  }

  const pkgLine = Object.entries(versions)
    .map(([p, v]) => `${p} ${v}`)
    .join(', ');
  const report = renderReport(
    {
      command: `npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`,
      machine: machineLine(),
      corpus:
        `${opts.set} set — ${pkgLine}; ${corpus.pages.toLocaleString('en')} pages, ${(corpus.htmlBytes / MIB).toFixed(1)} MiB HTML, ` +
        `${(corpus.textBytes / MIB).toFixed(1)} MiB extracted text; ${queries.length} queries.`,
      started: new Date(started).toISOString().replace(/\.\d+Z$/, 'Z'),
      durationS: (Date.now() - started) / 1000,
    },
    tables,
    footnotes,
  );
  process.stdout.write(report);
  const resultsDir = join(repoRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.md'), report);
  writeFileSync(join(workDir, `results-${new Date(started).toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify({ opts, tables }, null, 2) + '\n');
  if (opts.record) recordInDocs(report);
  log('done');
}

process.on('exit', killAllChildren);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    killAllChildren();
    process.exit(130);
  });
}
main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  killAllChildren();
  process.exit(1);
});
