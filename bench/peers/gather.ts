/**
 * Gathering peers: GNU wget and crawlee's CheerioCrawler crawling the same
 * loopback site from the same seeds, and a bare undici loop
 * (undici-loop.ts) as the ceiling of a polite crawler in Node.js here. wget
 * and crawlee write what they fetch under the run directory, which the
 * harness removes after each run.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { check, run } from '../measure.js';
import { installed, packageVersion } from './versions.js';
import type { Availability, BenchContext, GatherEntry, GatherResult } from '../parts.js';

function wgetVersion(): string | undefined {
  const r = spawnSync('wget', ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  return /Wget (\S+)/.exec(r.stdout)?.[1];
}

/** wget's exit statuses that still mean "crawled": 4 network failure (our resets), 8 server error responses (our 404/500s). */
export const WGET_OK = new Set([0, 4, 8]);

/** One recursive wget crawl of the host of `seed` into `dir`, as every wget run of the bench makes it. */
export function wgetArgs(seed: string, dir: string, logFile: string, extra: readonly string[] = []): string[] {
  return [
    '--recursive',
    '--level=inf',
    '--no-parent',
    '-e',
    'robots=on',
    '--wait=0',
    '--tries=2',
    '--waitretry=0',
    '--timeout=20',
    '--no-host-directories',
    '--no-verbose',
    '--user-agent=wget-sherlock-bench',
    `--directory-prefix=${dir}`,
    `--output-file=${logFile}`,
    ...extra,
    seed,
  ];
}

/** A factory, so that the version is read after the harness has installed wget. */
export const wget = (): GatherEntry => ({
  name: `wget ${wgetVersion() ?? '?'}, one process per host`,
  how:
    'wget: one `wget --recursive --level=inf --no-parent -e robots=on --wait=0 --tries=2 --waitretry=0 --timeout=20 ' +
    '--no-host-directories` per host, all hosts at once, each started at its host\'s entry page (wget crawls one host at a ' +
    'time and does not follow links to other hosts); honours robots.txt Disallow, not Crawl-delay. Time: first start to last exit; ' +
    'peak RSS: sum over the processes.',
  async available(): Promise<Availability> {
    return wgetVersion() === undefined ? { status: 'unavailable', reason: 'wget not installed' } : true;
  },
  async crawl(ctx: BenchContext, runDir: string): Promise<GatherResult> {
    const start = performance.now();
    const jobs = ctx.seeds.map((seed, i) => {
      const dir = join(runDir, `host-${i}`);
      mkdirSync(dir, { recursive: true });
      return run('wget', wgetArgs(seed, dir, join(dir, 'wget.log')), { timeoutMs: 1_800_000, keepOutput: 4000 });
    });
    const results = await Promise.all(jobs);
    const wallMs = performance.now() - start;
    results.forEach((r, i) => {
      if (r.timedOut || r.status === null || !WGET_OK.has(r.status)) {
        throw new Error(`wget ${ctx.seeds[i]}: exit ${r.status ?? r.signal}${r.timedOut ? ' (timed out)' : ''}`);
      }
    });
    return { wallMs, peakRss: sumKnown(results.map((r) => r.peakRss)), cpuMs: sumKnown(results.map((r) => r.cpuMs)) };
  },
});

export const undiciLoop = (): GatherEntry => ({
  name: `bare undici ${packageVersion('undici') ?? '?'} loop`,
  how:
    'bare undici loop (bench/peers/undici-loop.ts): per host robots.txt first (Disallow through robots-parser), then one request ' +
    'at a time on one kept-alive connection, no delay, one retry; links by a regular expression over `href="…"`, same host ' +
    'only; bodies dropped: no parsing, archive or URL database, so it bounds what any crawler keeping to one request at a time ' +
    'per IP can do on this machine and site. Time: process start to exit.',
  async available(): Promise<Availability> {
    return installed('undici', 'npm ci');
  },
  crawl: (ctx, runDir) => undiciLoopRun(ctx, runDir, []),
});

/** sherlock's processor floor: the same loop doing on its one thread what sherlock's parse worker does for every response. */
export const undiciPrepareFloor = (): GatherEntry => ({
  name: 'floor: the bare loop + sherlock\'s parse and ARC framing',
  how:
    'floor: the bare undici loop run with `--prepare`: each response also goes through the parse worker\'s own step on the same ' +
    'thread (gatherer/parse-worker.ts prepareResponse: the ARC record framed at the store\'s gzip level and its SHA-1, the body\'s MD5, ' +
    'a 200 HTML page parsed and its bucket body deflated). No files, URL database, scheduler or second thread: the least processor ' +
    'time a crawler storing what sherlock stores, with sherlock\'s parser, spends per page; the rest of sherlock\'s is its own overhead.',
  async available(): Promise<Availability> {
    return installed('undici', 'npm ci');
  },
  crawl: (ctx, runDir) => undiciLoopRun(ctx, runDir, ['--prepare']),
});

async function undiciLoopRun(ctx: BenchContext, runDir: string, flags: readonly string[]): Promise<GatherResult> {
  mkdirSync(runDir, { recursive: true });
  const script = join(ctx.distDir, 'peers', 'undici-loop.js');
  const r = check('undici loop', await run(process.execPath, [script, ctx.seedsFile, ...flags], { cwd: runDir, timeoutMs: 1_800_000, keepOutput: 4000 }));
  return { wallMs: r.wallMs, peakRss: r.peakRss, cpuMs: r.cpuMs };
}

/** The sum over processes run side by side, or undefined when one of them went unmeasured. */
function sumKnown(values: ReadonlyArray<number | undefined>): number | undefined {
  let sum = 0;
  for (const v of values) {
    if (v === undefined) return undefined;
    sum += v;
  }
  return sum;
}

export const CRAWLEE_MIN_CONCURRENCY = 8;
export const CRAWLEE_MAX_CONCURRENCY = 64;

export const crawlee = (): GatherEntry => ({
  name: `crawlee ${packageVersion('@crawlee/cheerio') ?? '?'} CheerioCrawler`,
  how:
    `crawlee: one CheerioCrawler (@crawlee/cheerio) with every host's entry page as a start URL, ` +
    `enqueueLinks({strategy: 'same-hostname'}), respectRobotsTxtFile: true (Disallow only; crawlee has no Crawl-delay), ` +
    `maxRequestRetries 1, concurrency ${CRAWLEE_MIN_CONCURRENCY}–${CRAWLEE_MAX_CONCURRENCY} (autoscaled), in-memory storage. ` +
    'Time: process start to exit.',
  async available(): Promise<Availability> {
    return installed('@crawlee/cheerio', 'npm install');
  },
  async crawl(ctx: BenchContext, runDir: string): Promise<GatherResult> {
    mkdirSync(runDir, { recursive: true });
    const r = check(
      'crawlee',
      await run(
        process.execPath,
        [
          join(ctx.distDir, 'peers', 'crawlee-crawl.js'),
          ctx.seedsFile,
          String(ctx.corpus.pages * 4 + 1000),
          String(CRAWLEE_MIN_CONCURRENCY),
          String(CRAWLEE_MAX_CONCURRENCY),
        ],
        {
          cwd: runDir,
          env: {
            ...process.env,
            CRAWLEE_STORAGE_DIR: join(runDir, 'storage'),
            CRAWLEE_PERSIST_STORAGE: 'false',
            CRAWLEE_PURGE_ON_START: 'true',
            CRAWLEE_LOG_LEVEL: 'WARNING',
          },
          timeoutMs: 3_600_000,
          keepOutput: 20_000,
        },
      ),
    );
    return { wallMs: r.wallMs, peakRss: r.peakRss, cpuMs: r.cpuMs };
  },
});
