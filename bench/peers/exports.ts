/**
 * Exports peer: CDX from archived responses. One extra wget crawl of the site
 * (one process per host, as in gathering, untimed) with `--warc-file` writes
 * the responses as gzipped WARC files; warcio.js (`warcio cdx-index --format
 * cdx`) then indexes them into 11-field CDX lines — the job `sherlock export
 * cdx` does from its ARC files.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { check, run } from '../measure.js';
import { sizeOf } from './engines.js';
import { WGET_OK, wgetArgs } from './gather.js';
import type { Availability, BenchContext, ExportEntry, ExportResult } from '../parts.js';

function warcioCli(): { cli: string; version: string } | undefined {
  try {
    // warcio's "exports" hide package.json: walk up from its entry point.
    let dir = dirname(createRequire(import.meta.url).resolve('warcio'));
    while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
    const pkgFile = join(dir, 'package.json');
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string; bin?: string | Record<string, string> };
    const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin?.['warcio'] ?? 'dist/cli.js');
    return { cli: join(dirname(pkgFile), bin), version: pkg.version };
  } catch {
    return undefined;
  }
}

let made: string[] | undefined;

/** The WARC files of one wget crawl of the site, made once per harness run. */
async function warcFiles(ctx: BenchContext): Promise<string[]> {
  if (made !== undefined) return made;
  const dir = join(ctx.workDir, 'warc');
  const list = (): string[] =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith('.warc.gz'))
          .sort()
          .map((f) => join(dir, f))
      : [];
  if (ctx.server === undefined) throw new Error('no WARC files yet and the site server is not running');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  ctx.log('exports: one wget crawl with --warc-file (untimed)');
  const results = await Promise.all(
    ctx.seeds.map((seed, i) => {
      const out = join(dir, `files-${i}`);
      return run(
        'wget',
        wgetArgs(seed, out, join(dir, `wget-${i}.log`), [`--warc-file=${join(dir, `host-${i}`)}`]),
        { timeoutMs: 1_800_000, measureRss: false, keepOutput: 2000 },
      );
    }),
  );
  results.forEach((r, i) => {
    if (r.timedOut || r.status === null || !WGET_OK.has(r.status)) throw new Error(`wget --warc-file ${ctx.seeds[i]}: exit ${r.status ?? r.signal}`);
  });
  for (let i = 0; i < ctx.seeds.length; i++) rmSync(join(dir, `files-${i}`), { recursive: true, force: true });
  made = list();
  if (made.length === 0) throw new Error('wget wrote no WARC files');
  return made;
}

function countCdxLines(file: string): number {
  let n = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) if (line !== '' && !line.startsWith(' CDX')) n++;
  return n;
}

const warcio = warcioCli();

export const warcioCdx: ExportEntry = {
  name: `warcio.js ${warcio?.version ?? '?'} cdx-index (WARC from wget)`,
  format: 'CDX',
  how:
    'Exports peer: the WARC files (gzip per record) of one extra wget crawl of the site (`--warc-file`, one per host, untimed), ' +
    'indexed by `warcio cdx-index --format cdx` (npm warcio) into 11-field CDX; records are CDX lines.',
  async available(): Promise<Availability> {
    return warcio === undefined ? { status: 'unavailable', reason: 'warcio not installed (npm install)' } : true;
  },
  async export(ctx: BenchContext, dir: string): Promise<ExportResult> {
    const files = await warcFiles(ctx);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const out = join(dir, 'index.cdx');
    const r = check(
      'warcio cdx-index',
      await run('sh', ['-c', 'out="$1"; shift; exec "$@" > "$out"', 'sh', out, process.execPath, warcio!.cli, 'cdx-index', '--format', 'cdx', ...files], {
        timeoutMs: 1_800_000,
      }),
    );
    return { wallMs: r.wallMs, records: countCdxLines(out), outBytes: sizeOf(out), peakRss: r.peakRss };
  },
};
