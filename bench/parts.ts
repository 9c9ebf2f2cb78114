/**
 * What the harness measures, part by part, and the seams where each side plugs
 * in. A table has peers and one sherlock entry, all of the same shape; an
 * entry whose `available` answers a reason instead of `true` gets a row saying
 * so ("not built yet" for sherlock's parts that do not exist) and is never
 * run. sherlock's entries live in `sherlock.ts` and drive only the CLI
 * contract of DESIGN §2; the peers live in `peers/`.
 */

import type { CorpusFiles } from './extract.js';
import type { Query } from './queries.js';
import type { RunningServer } from './server-control.js';
import type { SetName } from './corpus.js';
import type { SiteLayout } from './site.js';

export interface BenchOptions {
  set: SetName;
  runs: number;
  /** Timed passes over the query set per search run. */
  passes: number;
  /** Untimed passes before them (the JVM's JIT needs a few). */
  warmup: number;
  port: number;
  /** Skip apt-get (fail if something is missing). */
  noInstall: boolean;
  newQueries: boolean;
  /** Re-derive the relevance judgments (bench/relevance/). */
  newJudgments: boolean;
  /** Parts to run (all when empty). */
  only: readonly PartId[];
  /** Documents of each run of the scale part (`--scale`). */
  scale: readonly number[];
  /** Replace the numbers in docs/benchmarks.md. */
  record: boolean;
  /** Extra `--set key=value` for sherlock's commands. */
  sherlockSet: readonly string[];
  /** The crawl-scale part: seconds each configuration crawls (`--crawl-seconds`), its hosts, and the addresses of the politeness-bound and the processor-bound configurations. */
  crawlSeconds: number;
  crawlHosts: number;
  crawlAddresses: readonly [number, number];
}

export type PartId = 'gather' | 'urldb' | 'index' | 'search' | 'relevance' | 'export' | 'nutch' | 'import' | 'pdf' | 'scale' | 'crawl-scale' | 'result-cache' | 'suggest';
export const PART_IDS: readonly PartId[] = ['gather', 'urldb', 'index', 'search', 'relevance', 'export', 'nutch', 'import', 'pdf', 'scale', 'crawl-scale', 'result-cache', 'suggest'];

export interface BenchContext {
  readonly opts: BenchOptions;
  readonly repoRoot: string;
  /** dist/bench (compiled harness). */
  readonly distDir: string;
  /** bench/work/<set> (generated, git-ignored). */
  readonly workDir: string;
  readonly layout: SiteLayout;
  readonly corpus: CorpusFiles;
  readonly queries: readonly Query[];
  readonly queryFile: string;
  /** One entry URL per host, one a line. */
  readonly seedsFile: string;
  readonly seeds: readonly string[];
  server: RunningServer | undefined;
  log(line: string): void;
}

/** `true` when the entry can run, else the reason it cannot (shown in its row). */
export type Availability = true | { status: 'not-built' | 'unavailable'; reason: string };

export interface BenchEntry {
  /** Row label, with version. */
  readonly name: string;
  /** One footnote line: exactly how it ran. */
  readonly how: string;
  available(ctx: BenchContext): Promise<Availability>;
}

/** One crawl of the site from the seeds; the harness reads the access log around it. */
export interface GatherResult {
  wallMs: number;
  /** Sum of the peak RSS of the crawler's processes. */
  peakRss: number | undefined;
  /** Sum of the user + system processor time of the crawler's processes, ms. */
  cpuMs: number | undefined;
}
export interface GatherEntry extends BenchEntry {
  crawl(ctx: BenchContext, runDir: string): Promise<GatherResult>;
}

export interface BuildResult {
  wallMs: number;
  peakRss: number | undefined;
  docs: number;
  sizeBytes: number;
}
export interface SearchResult {
  latenciesMs: number[];
  zeroHits: number;
  peakRss: number | undefined;
  /** A server's start: spawned to ready (its index loaded), ms. */
  startupMs?: number;
  /**
   * Latencies in the engine's own process, when they differ from latenciesMs
   * (sherlock, measured over WebSocket): ranked only (matching, totals, top
   * 10, facets), and whole (with the hits' cards and snippets).
   */
  inProcess?: { rankMs: number[]; searchMs: number[] };
  /** Each query's top 10 URLs, best first, in query-set order (from the first, untimed pass), for the overlap with Lucene. */
  top?: string[][];
  /** Under load (sherlock over WebSocket): `clients` sockets with `depth` queries in flight each; wall seconds of the whole set and each query's latency. */
  concurrent?: { clients: number; depth: number; seconds: number; latenciesMs: number[] };
  /** sherlock: the same passes and load over its JSON API (GET /api/search) on the same server. */
  http?: { latenciesMs: number[]; concurrent: { clients: number; depth: number; seconds: number; latenciesMs: number[] } };
}
/** An engine that builds an index (indexing table) and answers the query set with it (searching table); a floor only builds. */
export interface EngineEntry extends BenchEntry {
  build(ctx: BenchContext, indexDir: string): Promise<BuildResult>;
  search?(ctx: BenchContext, indexDir: string): Promise<SearchResult>;
}

/** How many synthetic URLs on how many sites (bench/urldb-workload.ts). */
export interface UrlDbScale {
  urls: number;
  sites: number;
}
/** Wall and process CPU time of one phase (the machine is shared: CPU time is the steadier figure). */
export interface UrlDbTiming {
  wallMs: number;
  cpuMs: number;
}
export interface UrlDbResult {
  urls: number;
  /** Inject every URL, a batch per transaction. */
  inject: UrlDbTiming;
  /** Pick `planned` new URLs due and mark them queued. */
  plan: UrlDbTiming;
  /** Record a fetch result for each of them. */
  merge: UrlDbTiming;
  planned: number;
  sizeBytes: number;
  peakRss: number | undefined;
}
export interface UrlDbEntry extends BenchEntry {
  load(ctx: BenchContext, dir: string, scale: UrlDbScale): Promise<UrlDbResult>;
}

export interface ExportResult {
  wallMs: number;
  records: number;
  outBytes: number;
  peakRss: number | undefined;
}
export interface ExportEntry extends BenchEntry {
  /** What is exported (e.g. "CDX"): rows of one format are compared. */
  readonly format: string;
  export(ctx: BenchContext, dir: string): Promise<ExportResult>;
}
