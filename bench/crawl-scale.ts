/**
 * The crawl-scale part (issue 32, `--only crawl-scale`): `sherlock crawl` of
 * the simulated web (sim-web.ts) for `--crawl-seconds` in two configurations
 * of `--crawl-hosts` hosts, then SIGTERM (the crawl drains and prints its
 * summary):
 *
 * - politeness-bound: few addresses (`--crawl-addresses` P, default 300), so
 *   that Σ 1 ÷ (min_delay + latency) is well below what 2 cores can fetch;
 *   the target is ≥ 0.9× that bound;
 * - processor-bound: most hosts alone on an address (C, default 5,000), the
 *   bound far above the processor's: pages/s against 2 cores ÷ CPU a page.
 *
 * Both: zero politeness violations, RSS ≤ 500 MB, no host starved
 * (sim-web-log.ts). While the crawl runs, its node process's RSS
 * (/proc/PID/status VmRSS) and open sockets (/proc/PID/fd links to socket:)
 * are read every second; RSS is logged each minute, the series a row's note
 * (the one-hour soak reads "RSS flat" off it). Names resolve only through
 * the hosts file written here (`gatherer.hosts_file`), each to its 127.16+
 * address.
 *
 * Files: bench/work/<set>/sim-web/<configuration>/ hosts.txt, seeds.txt,
 * pages.txt (the corpus pages served), access.log, state/ (the crawl's),
 * rebuilt at every run.
 */

import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { check, run } from './measure.js';
import { sizeOf } from './peers/engines.js';
import type { BenchContext } from './parts.js';
import type { Column, Row, Table } from './report.js';
import { spawnServer } from './server-control.js';
import { cliPath, sets } from './sherlock.js';
import { analyseSimLog, GAP_TOLERANCE_MS, parseLog, STARVATION_FACTOR } from './sim-web-log.js';
import type { SimWebReport } from './sim-web-log.js';
import { FLAKY_500, FLAKY_503, FLAKY_RESET, hostsFile, LATENCY_CLAMP_MS, listeningAddresses, MAX_PAGES, MIN_PAGES, seeds, simWeb } from './sim-web.js';
import type { SimBehaviour } from './sim-web.js';
import { decodePath } from './site.js';

const MIN_DELAY_MS = 1000;
const MAX_CONNECTIONS = 256;
/** Corpus pages the server keeps in memory (every n-th of the set's): variety without a large server. */
const CORPUS_PAGES = 1000;
/** File descriptors beside the listeners: the crawler's connections accepted, the log, node's own. */
const FD_MARGIN = 2 * MAX_CONNECTIONS + 200;
/** How long the drain after SIGTERM may take (silent hosts hold a fetch for headers_timeout). */
const DRAIN_MS = 300_000;
const MIB = 1048576;

/** The gatherer's settings here: the min_delay, and timeouts short enough that silent hosts do not dominate. */
const GATHERER_SETS = [
  `gatherer.min_delay=${MIN_DELAY_MS / 1000}s`,
  `gatherer.max_connections=${MAX_CONNECTIONS}`,
  'gatherer.connect_timeout=2s',
  'gatherer.headers_timeout=10s',
  'gatherer.body_timeout=10s',
  'gatherer.fetch_timeout=30s',
];

interface Configuration {
  readonly label: 'politeness-bound' | 'processor-bound';
  readonly hosts: number;
  readonly addresses: number;
}

/** The set's corpus pages (every n-th, at most CORPUS_PAGES), as files: text.tsv's URLs on the site's hosts. */
function corpusFiles(ctx: BenchContext): string[] {
  const roots = new Map(ctx.layout.hosts.map((h) => [h.address, h.root]));
  const files: string[] = [];
  for (const line of readFileSync(ctx.corpus.textFile, 'utf8').split('\n')) {
    const url = line.split('\t')[1];
    if (url === undefined) continue;
    const u = new URL(url);
    const root = roots.get(u.hostname);
    if (root !== undefined) files.push(join(root, decodePath(u.pathname)));
  }
  const step = Math.max(1, Math.ceil(files.length / CORPUS_PAGES));
  return files.filter((_, i) => i % step === 0);
}

/** The soft limit on open files of this process (children inherit it). */
function openFilesLimit(): number {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m === null || m[1] === 'unlimited' ? Infinity : Number(m[1]);
}

/** What a process is doing now, from /proc; undefined once it has gone. */
function sample(pid: number): { rss: number; sockets: number } | undefined {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    let sockets = 0;
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++;
      } catch {
        // closed meanwhile
      }
    }
    return { rss: kb === null ? 0 : Number(kb[1]) * 1024, sockets };
  } catch {
    return undefined;
  }
}

/** The command GNU time runs (its one child), or the pid itself when nothing is under it. */
function measured(pid: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return children === '' ? undefined : Number(children.split(' ')[0]);
  } catch {
    return undefined;
  }
}

interface CrawlRun {
  report: SimWebReport;
  /** Distinct pages over the whole log (the drain too), which the processor times are divided by. */
  allPages: number;
  cpuMs: number;
  serverCpuMs: number;
  peakRss: number;
  peakSockets: number;
  rssByMinute: number[];
  dnsLookups: number;
  hostFileBytes: number;
  queueFileBytes: number;
  fetched: number;
  behaviours: Record<SimBehaviour, number>;
  addressesListening: number;
}

async function crawlSimWeb(ctx: BenchContext, config: Configuration): Promise<CrawlRun> {
  const dir = join(ctx.workDir, 'sim-web', config.label);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const web = simWeb({ hosts: config.hosts, addresses: config.addresses, port: ctx.opts.port });
  const listening = listeningAddresses(web);
  const limit = openFilesLimit();
  if (listening.length + FD_MARGIN > limit) throw new Error(`${listening.length} listening addresses and ${FD_MARGIN} more descriptors exceed the open-files limit ${limit} (ulimit -n)`);
  const files = { hosts: join(dir, 'hosts.txt'), seeds: join(dir, 'seeds.txt'), pages: join(dir, 'pages.txt'), log: join(dir, 'access.log'), state: join(dir, 'state') };
  writeFileSync(files.hosts, hostsFile(web));
  writeFileSync(files.seeds, seeds(web));
  writeFileSync(files.pages, corpusFiles(ctx).join('\n') + '\n');
  writeFileSync(files.log, '');
  const server = await spawnServer(
    join(ctx.distDir, 'sim-web-server.js'),
    ['--hosts', String(config.hosts), '--addresses', String(config.addresses), '--port', String(ctx.opts.port), '--pages', files.pages, '--log', files.log, '--max-seconds', String(ctx.opts.crawlSeconds + DRAIN_MS / 1000 + 600)],
    'simulated web server',
  );
  ctx.log(`  ${config.label}: ${config.hosts.toLocaleString('en')} hosts on ${config.addresses.toLocaleString('en')} addresses (${listening.length} listening), server pid ${server.pid}; crawling ${ctx.opts.crawlSeconds} s`);
  let timePid: number | undefined;
  let crawlerPid: number | undefined;
  let stoppedAt: number | undefined;
  let peakRss = 0;
  let peakSockets = 0;
  const rssByMinute: number[] = [];
  const started = Date.now();
  let r;
  try {
    const crawl = run(process.execPath, [cliPath(ctx), 'crawl', '--state', files.state, '--seeds', files.seeds, '--json', ...GATHERER_SETS.flatMap((s) => ['--set', s]), '--set', `gatherer.hosts_file=${files.hosts}`, ...sets(ctx)], {
      timeoutMs: ctx.opts.crawlSeconds * 1000 + DRAIN_MS,
      keepOutput: 20_000,
      onSpawn: (pid) => (timePid = pid),
    });
    const watch = setInterval(() => {
      crawlerPid ??= timePid === undefined ? undefined : measured(timePid);
      if (crawlerPid === undefined) return;
      const now = sample(crawlerPid);
      if (now === undefined) return;
      peakRss = Math.max(peakRss, now.rss);
      peakSockets = Math.max(peakSockets, now.sockets);
      const elapsed = Date.now() - started;
      if (elapsed >= (rssByMinute.length + 1) * 60_000 && stoppedAt === undefined) {
        rssByMinute.push(now.rss);
        ctx.log(`  ${config.label}: minute ${rssByMinute.length}: RSS ${(now.rss / MIB).toFixed(0)} MiB, ${now.sockets} sockets`);
      }
      if (elapsed >= ctx.opts.crawlSeconds * 1000 && stoppedAt === undefined) {
        stoppedAt = Date.now();
        process.kill(crawlerPid, 'SIGTERM');
      }
    }, 1000);
    try {
      r = check('sherlock crawl', await crawl);
    } finally {
      clearInterval(watch);
    }
  } finally {
    await server.stop();
  }
  const serverOut = server
    .stdout()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { cpuMs?: number })
    .find((o) => o.cpuMs !== undefined);
  const summary = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { fetched?: number; dnsLookups?: number };
  const lines = parseLog(readFileSync(files.log, 'utf8'));
  const start = lines.reduce((min, l) => Math.min(min, l.t), Infinity);
  const report = analyseSimLog(web, lines, { minDelayMs: MIN_DELAY_MS, toleranceMs: GAP_TOLERANCE_MS, start, end: stoppedAt ?? Date.now(), starvationFactor: STARVATION_FACTOR });
  const behaviours = { normal: 0, slow: 0, flaky: 0, 'robots-503': 0, silent: 0, refused: 0 };
  for (const h of web.hosts) behaviours[h.behaviour]++;
  return {
    report,
    allPages: report.allPages,
    cpuMs: r.cpuMs ?? Number.NaN,
    serverCpuMs: serverOut?.cpuMs ?? Number.NaN,
    peakRss: Math.max(peakRss, r.peakRss ?? 0),
    peakSockets,
    rssByMinute,
    dnsLookups: summary.dnsLookups ?? Number.NaN,
    hostFileBytes: sizeOf(join(files.state, 'gather', 'hosts')),
    queueFileBytes: sizeOf(join(files.state, 'gather', 'queue')),
    fetched: summary.fetched ?? 0,
    behaviours,
    addressesListening: listening.length,
  };
}

const COLUMNS: Column[] = [
  { key: 'hosts', label: 'hosts', format: 'int' },
  { key: 'addresses', label: 'addresses', format: 'int' },
  { key: 'pages', label: 'pages', format: 'int' },
  { key: 'pagesPerS', label: 'pages/s', format: 'dec1' },
  { key: 'requestsPerS', label: 'requests/s', format: 'dec1' },
  { key: 'bound', label: 'politeness bound, requests/s', format: 'dec1' },
  { key: 'ofBound', label: 'pages/s ÷ bound', format: 'dec2' },
  { key: 'requestsOfBound', label: 'requests/s ÷ bound', format: 'dec2' },
  { key: 'cpuBound', label: 'processor bound, pages/s', format: 'dec1' },
  { key: 'cpuBoundWithServer', label: 'processor bound with the server, pages/s', format: 'dec1' },
  { key: 'cpuMsPerPage', label: 'CPU ms/page (crawler)', format: 'dec2' },
  { key: 'serverCpuMsPerPage', label: 'server CPU ms/page', format: 'dec2' },
  { key: 'overlaps', label: 'overlaps', format: 'int' },
  { key: 'gaps', label: 'gap violations', format: 'int' },
  { key: 'robots', label: 'robots.txt violations', format: 'int' },
  { key: 'starved', label: 'starved hosts', format: 'int' },
  { key: 'worstStarvation', label: 'worst wait ÷ fair period', format: 'dec2' },
  { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
  { key: 'sockets', label: 'peak open sockets', format: 'int' },
  { key: 'dns', label: 'DNS lookups', format: 'int' },
  { key: 'hostFile', label: 'host-file bytes', format: 'int' },
  { key: 'queueFile', label: 'queue-file bytes', format: 'int' },
];

function rowOf(config: Configuration, c: CrawlRun): Row {
  const cores = cpus().length;
  const p = c.report;
  const perPage = c.cpuMs / c.allPages;
  const serverPerPage = c.serverCpuMs / c.allPages;
  return {
    name: `sherlock crawl, ${config.label}`,
    status: 'ok',
    values: {
      hosts: config.hosts,
      addresses: config.addresses,
      pages: p.pages,
      pagesPerS: p.pagesPerS,
      requestsPerS: p.requestsPerS,
      bound: p.boundPerS,
      ofBound: p.pagesPerS / p.boundPerS,
      requestsOfBound: p.requestsPerS / p.boundPerS,
      cpuBound: (cores * 1000) / perPage,
      cpuBoundWithServer: (cores * 1000) / (perPage + serverPerPage),
      cpuMsPerPage: perPage,
      serverCpuMsPerPage: serverPerPage,
      overlaps: p.overlaps,
      gaps: p.gapViolations,
      robots: p.robotsViolations + p.robots503Violations,
      starved: p.starved,
      worstStarvation: p.worstStarvation,
      rss: c.peakRss,
      sockets: c.peakSockets,
      dns: c.dnsLookups,
      hostFile: c.hostFileBytes,
      queueFile: c.queueFileBytes,
    },
  };
}

function noteOf(config: Configuration, c: CrawlRun): string {
  const p = c.report;
  const b = c.behaviours;
  const mib = (bytes: number): string => (bytes / MIB).toFixed(0);
  return (
    `${config.label}: ${c.addressesListening.toLocaleString('en')} addresses listening; hosts ${b.normal} normal, ${b.slow} slow, ${b.flaky} flaky, ${b['robots-503']} robots-503, ${b.silent} silent, ${b.refused} refused; ` +
    `${p.requests.toLocaleString('en')} requests in ${p.windowS.toFixed(0)} s (statuses ${JSON.stringify(p.statuses)}), ${c.fetched.toLocaleString('en')} fetches in the crawl's summary; ` +
    `shortest gap on an address ${p.minGapMs.toFixed(1)} ms, at most ${p.maxInflight} in flight on one; ${p.liveHosts.toLocaleString('en')} live hosts, ${p.unasked.toLocaleString('en')} of them asked nothing in the window; ` +
    `robots.txt violations: ${p.robotsViolations} into /private/, ${p.robots503Violations} on robots-503 hosts; ` +
    `RSS by minute (MiB): ${c.rssByMinute.length === 0 ? 'under a minute' : c.rssByMinute.map(mib).join(', ')}.`
  );
}

/** The two simulated-web configurations, one row each; a configuration that fails says why in its row. */
export async function simWebTable(ctx: BenchContext, footnotes: string[]): Promise<Table> {
  const o = ctx.opts;
  const configs: Configuration[] = [
    { label: 'politeness-bound', hosts: o.crawlHosts, addresses: o.crawlAddresses[0] },
    { label: 'processor-bound', hosts: o.crawlHosts, addresses: o.crawlAddresses[1] },
  ];
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const config of configs) {
    ctx.log(`crawl scale: ${config.label}`);
    try {
      const c = await crawlSimWeb(ctx, config);
      const note = noteOf(config, c);
      rows.push(rowOf(config, c));
      notes.push(note);
      ctx.log(`  ${note}`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      ctx.log(`  ${config.label} failed: ${message}`);
      rows.push({ name: `sherlock crawl, ${config.label}`, status: 'failed', message: message.split('\n')[0]!.slice(0, 200) });
    }
  }
  footnotes.push(HOW);
  return {
    id: 'crawl-scale',
    title: `Crawl scale — the simulated web, ${o.crawlHosts.toLocaleString('en')} hosts, ${o.crawlSeconds} s each`,
    subtitle:
      `sherlock crawl of hosts under .test on 127.16.0.0/12 (bench/sim-web.ts), min_delay ${MIN_DELAY_MS / 1000} s, SIGTERM after ${o.crawlSeconds} s. ` +
      'Counted from the server\'s access log: pages = distinct pages answered 200 from the first request to the SIGTERM. ' +
      `Targets: pages/s ≥ 0.9× the politeness bound (politeness-bound row), no overlap or gap under min_delay − ${GAP_TOLERANCE_MS} ms, RSS ≤ 500 MB, no host waiting over ${STARVATION_FACTOR}× its fair period.`,
    columns: COLUMNS,
    ratios: [],
    peers: rows.slice(0, 1),
    sherlock: rows[1]!,
    sherlockLabel: rows[1]!.name,
    notes,
  };
}

const HOW =
  'Crawl scale: `sherlock crawl --state DIR --seeds FILE --json` with ' +
  [...GATHERER_SETS, 'gatherer.hosts_file=FILE'].map((s) => `--set ${s}`).join(' ') +
  ' (and the bench\'s own sets), one entry page per host as seeds, under GNU time (its CPU: user + system of the whole run, start-up and drain included, ÷ the distinct pages of the whole log), stopped by SIGTERM. ' +
  `The web: ⌈addresses ÷ 20⌉ addresses shared, the rest one host each; ${MIN_PAGES}–${MAX_PAGES} pages a host from ${CORPUS_PAGES} pages of the set's corpus, links removed and a block of generated ones appended (a tree from the entry page, two more, a quarter into the robots.txt-disallowed /private/, a tenth to another host); ` +
  `latency log-normal around 80 ms per host, clamped to ${LATENCY_CLAMP_MS[0]}–${LATENCY_CLAMP_MS[1]} ms, slow hosts 5–10× that, each answer ±25 %; ` +
  `flaky hosts answer ${FLAKY_503 * 100} % 503 (Retry-After), ${FLAKY_500 * 100} % 500, ${FLAKY_RESET * 100} % reset. ` +
  'Politeness bound: Σ over the addresses holding a live host (normal, slow, flaky) and asked anything in the window of 1 ÷ (min_delay + their mean answer time), each for the share of the window before its last live host had served every page, in requests (robots.txt and errors count): pages/s ÷ bound also pays for every host\'s robots.txt. ' +
  'Processor bound: the cores ÷ the crawler\'s CPU a page (with the server: ÷ both, as they share the cores). Fair period of a host: the larger of its address\'s turns shared among the live hosts there not yet finished, and the crawl\'s requests/s shared among all of them.';
