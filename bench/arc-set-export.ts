/**
 * The export measurement of issue 9: `sherlock export cdx --arc …` over a
 * generated ARC set (`arc-set.ts`; 1,000,000 records, 100,000 under
 * `--quick`), records/s including the sort and peak RSS, next to warcio.js
 * indexing the same captures. warcio.js reads WARC only, so its input is the
 * WARC export of the set (`sherlock export warc`, made once, untimed, cached
 * beside the set): the same records, one gzip member each.
 */

import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureArcSet, type ArcSet } from './arc-set.js';
import { check, run } from './measure.js';
import type { Availability, BenchContext, ExportEntry, ExportResult } from './parts.js';
import { sizeOf } from './peers/engines.js';

/** Records in the generated set for this run. */
export function arcSetSize(ctx: BenchContext): number {
  return ctx.opts.set === 'small' ? 100_000 : 1_000_000;
}

export function arcSet(ctx: BenchContext): Promise<ArcSet> {
  return ensureArcSet(join(ctx.repoRoot, 'bench', 'work'), arcSetSize(ctx), ctx.log);
}

export const cli = (ctx: BenchContext): string => join(ctx.repoRoot, 'dist', 'cli', 'sherlock.js');

/** Whether the tree's CLI is built, as an entry's availability. */
export async function cliBuilt(ctx: BenchContext): Promise<Availability> {
  return existsSync(cli(ctx)) ? true : { status: 'not-built', reason: 'dist/cli/sherlock.js missing' };
}

/** Lines of a CDX file that are not the legend, counted chunk by chunk. */
function countRecords(file: string): number {
  const fd = openSync(file, 'r');
  const chunk = Buffer.allocUnsafe(1 << 20);
  let lines = 0;
  let legend = false;
  try {
    for (let position = 0, n; (n = readSync(fd, chunk, 0, chunk.length, position)) > 0; position += n) {
      if (position === 0) legend = chunk.toString('latin1', 0, 4) === ' CDX';
      for (let at = chunk.indexOf(10); at !== -1 && at < n; at = chunk.indexOf(10, at + 1)) lines++;
    }
  } finally {
    closeSync(fd);
  }
  return legend ? lines - 1 : lines;
}

export const sherlockArcSetCdx: ExportEntry = {
  name: 'sherlock export cdx --arc',
  format: 'CDX',
  how: 'sherlock: `sherlock export cdx --arc FILE… --out index.cdx` over the generated ARC set (read, digest, SURT, external sort, write).',
  available: cliBuilt,
  async export(ctx, dir): Promise<ExportResult> {
    const set = await arcSet(ctx);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const out = join(dir, 'index.cdx');
    const r = check('sherlock export cdx --arc', await run(process.execPath, [cli(ctx), 'export', 'cdx', '--arc', ...set.files, '--out', out], { timeoutMs: 1_800_000 }));
    return { wallMs: r.wallMs, records: countRecords(out), outBytes: sizeOf(out), peakRss: r.peakRss };
  },
};

export function warcioBin(ctx: BenchContext): { cli: string; version: string } | undefined {
  const pkg = join(ctx.repoRoot, 'node_modules', 'warcio', 'package.json');
  if (!existsSync(pkg)) return undefined;
  const meta = JSON.parse(readFileSync(pkg, 'utf8')) as { version: string };
  return { cli: join(ctx.repoRoot, 'node_modules', '.bin', 'warcio'), version: meta.version };
}

/** The WARC export of the set, made once beside it. */
export async function warcOfSet(ctx: BenchContext, set: ArcSet): Promise<string[]> {
  const dir = join(set.dir, 'warc');
  const done = join(dir, 'done');
  if (!existsSync(done)) {
    ctx.log('exports: WARC export of the ARC set for warcio.js (untimed, cached)');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    check('sherlock export warc', await run(process.execPath, [cli(ctx), 'export', 'warc', '--arc', ...set.files, '--out', dir], { timeoutMs: 3_600_000, measureRss: false }));
    writeFileSync(done, '');
  }
  return readdirSync(dir)
    .filter((n) => n.endsWith('.warc.gz'))
    .sort()
    .map((n) => join(dir, n));
}

export function warcioArcSetCdx(ctx: BenchContext): ExportEntry {
  const warcio = warcioBin(ctx);
  return {
    name: `warcio.js ${warcio?.version ?? '?'} cdx-index (WARC of the set)`,
    format: 'CDX',
    how: 'Peer: `warcio cdx-index --format cdx` (npm warcio, which reads WARC only) over the WARC export of the same generated set (gzip per record); no sort, as warcio.js does not sort.',
    async available(): Promise<Availability> {
      return warcio === undefined ? { status: 'unavailable', reason: 'warcio not installed (npm install)' } : true;
    },
    async export(c, dir): Promise<ExportResult> {
      const files = await warcOfSet(c, await arcSet(c));
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const out = join(dir, 'index.cdx');
      const r = check(
        'warcio cdx-index',
        await run('sh', ['-c', 'out="$1"; shift; exec "$@" > "$out"', 'sh', out, process.execPath, warcio!.cli, 'cdx-index', '--format', 'cdx', ...files], { timeoutMs: 1_800_000 }),
      );
      return { wallMs: r.wallMs, records: countRecords(out), outBytes: sizeOf(out), peakRss: r.peakRss };
    },
  };
}
