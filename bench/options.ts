/**
 * Command line of `npm run bench -- [flags]` (pure, so it is tested).
 *
 *   --quick            the small set (postgresql-doc-15), 3 runs: a few minutes, for CI
 *   (default)          the medium set, 3 runs
 *   --large            the large set, 1 run
 *   --set NAME         small | medium | large
 *   --runs N           repetitions of each crawl and index build (medians are reported)
 *   --passes N         timed passes over the query set per search run
 *   --warmup N         untimed passes before them, for every engine alike (default 5)
 *   --port N           the site's port on every loopback address (default 8480)
 *   --only P[,P…]      gather, urldb, index, search, relevance, export, nutch, import, pdf, scale,
 *                      crawl-scale, result-cache, suggest
 *   --scale N[,N…]     the scale part with N generated documents each (10k, 100k, 1M, or a
 *                      number); alone, it is the only part run
 *   --crawl-seconds N  the crawl-scale part: seconds each configuration crawls (default 120;
 *                      3600 is the soak of docs/benchmarks.md)
 *   --crawl-hosts N    its simulated hosts (default 10,000)
 *   --crawl-addresses P,C  its addresses: politeness-bound, processor-bound (default 300,5000)
 *   --no-install       never run apt-get; fail if a package is missing
 *   --new-queries      regenerate bench/queries/<set>.tsv
 *   --new-judgments    re-derive the relevance judgments (bench/relevance/*.tsv)
 *   --record           also put the report into docs/benchmarks.md
 *   --sherlock-set K=V extra `--set` for sherlock's commands (repeatable)
 */

import { SET_NAMES } from './corpus.js';
import type { SetName } from './corpus.js';
import { PART_IDS } from './parts.js';
import type { BenchOptions, PartId } from './parts.js';

export const USAGE = `usage: npm run bench -- [--quick | --large | --set small|medium|large] [--runs N] [--passes N] [--warmup N]
       [--port N] [--only gather,urldb,index,search,relevance,export,nutch,import,pdf,scale,crawl-scale,result-cache,suggest] [--scale N[,N…]] [--no-install] [--new-queries] [--new-judgments] [--record]
       [--crawl-seconds N] [--crawl-hosts N] [--crawl-addresses P,C] [--sherlock-set key=value]…`;

export class UsageError extends Error {}

function positiveInt(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < 1) throw new UsageError(`${flag} needs a positive integer, got ${value ?? 'nothing'}`);
  return n;
}

/** "10k", "1M" or a plain number of documents, at least 100. */
function scaleSize(text: string): number {
  const m = /^(\d+)([kKmM]?)$/.exec(text);
  const n = m === null ? Number.NaN : Number(m[1]) * (m[2] === '' ? 1 : m[2]!.toLowerCase() === 'k' ? 1_000 : 1_000_000);
  if (!Number.isSafeInteger(n) || n < 100 || n > 100_000_000) throw new UsageError(`--scale: ${JSON.stringify(text)} is not a size of 100 to 100M documents (10k, 1M, 250000)`);
  return n;
}

export function parseOptions(argv: readonly string[]): BenchOptions | 'help' {
  let set: SetName = 'medium';
  let runs: number | undefined;
  let passes: number | undefined;
  let warmup = 5;
  let port = 8480;
  let noInstall = false;
  let newQueries = false;
  let newJudgments = false;
  let record = false;
  let only: PartId[] = [];
  let scale: number[] = [];
  const sherlockSet: string[] = [];
  let crawlSeconds = 120;
  let crawlHosts = 10_000;
  let crawlAddresses: [number, number] = [300, 5_000];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string | undefined => argv[++i];
    switch (a) {
      case '--help':
      case '-h':
        return 'help';
      case '--quick':
        set = 'small';
        break;
      case '--large':
        set = 'large';
        break;
      case '--set': {
        const v = value();
        if (!SET_NAMES.includes(v as SetName)) throw new UsageError(`--set needs one of ${SET_NAMES.join(', ')}, got ${v ?? 'nothing'}`);
        set = v as SetName;
        break;
      }
      case '--runs':
        runs = positiveInt(a, value());
        break;
      case '--passes':
        passes = positiveInt(a, value());
        break;
      case '--warmup':
        warmup = positiveInt(a, value());
        break;
      case '--port':
        port = positiveInt(a, value());
        if (port < 1024 || port > 65000) throw new UsageError('--port must be in 1024..65000');
        break;
      case '--only': {
        const v = value() ?? '';
        const parts = v.split(',').filter((p) => p !== '');
        for (const p of parts) if (!PART_IDS.includes(p as PartId)) throw new UsageError(`--only: unknown part ${p} (${PART_IDS.join(', ')})`);
        if (parts.length === 0) throw new UsageError('--only needs a list of parts');
        only = parts as PartId[];
        break;
      }
      case '--scale': {
        const v = value() ?? '';
        scale = v.split(',').filter((n) => n !== '').map((n) => scaleSize(n));
        if (scale.length === 0) throw new UsageError('--scale needs a list of sizes such as 10k,100k,1M');
        break;
      }
      case '--crawl-seconds':
        crawlSeconds = positiveInt(a, value());
        break;
      case '--crawl-hosts':
        crawlHosts = positiveInt(a, value());
        break;
      case '--crawl-addresses': {
        const v = value();
        const [p, c, extra] = (v ?? '').split(',');
        if (extra !== undefined) throw new UsageError('--crawl-addresses needs two numbers, P,C');
        crawlAddresses = [positiveInt(a, p), positiveInt(a, c)];
        break;
      }
      case '--no-install':
        noInstall = true;
        break;
      case '--new-queries':
        newQueries = true;
        break;
      case '--new-judgments':
        newJudgments = true;
        break;
      case '--record':
        record = true;
        break;
      case '--sherlock-set': {
        const v = value();
        if (v === undefined || !v.includes('=')) throw new UsageError('--sherlock-set needs key=value');
        sherlockSet.push(v);
        break;
      }
      default:
        throw new UsageError(`unknown argument ${a}`);
    }
  }
  if (Math.min(...crawlAddresses) < 2 || Math.max(...crawlAddresses) > crawlHosts) throw new UsageError(`--crawl-addresses: each of ${crawlAddresses.join(',')} must be 2 to --crawl-hosts (${crawlHosts})`);
  return {
    set,
    runs: runs ?? (set === 'large' ? 1 : 3),
    passes: passes ?? (set === 'large' ? 2 : 3),
    warmup,
    port,
    noInstall,
    newQueries,
    newJudgments,
    only: scale.length > 0 && only.length === 0 ? ['scale'] : only,
    scale: scale.length === 0 && only.includes('scale') ? [10_000] : scale,
    record,
    sherlockSet,
    crawlSeconds,
    crawlHosts,
    crawlAddresses,
  };
}
