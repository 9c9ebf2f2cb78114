/**
 * The archive import of issue 29: `sherlock import archive` over the WARC
 * export of the generated ARC set (arc-set.ts, the same files warcio.js
 * indexes in the export table), into a fresh state: records/s and MB/s of
 * archive read, peak RSS. Each capture is parsed as a fetch is (HTML, text,
 * language), so its work is a crawl's parse, not an index's; the peer,
 * `warcio cdx-index`, reads, inflates and digests the same records.
 */

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { arcSet, cli, cliBuilt, warcioBin, warcOfSet } from './arc-set-export.js';
import { check, run } from './measure.js';
import type { Availability, BenchContext, ExportEntry, ExportResult } from './parts.js';
import { sizeOf } from './peers/engines.js';

const inputBytes = (files: readonly string[]): number => files.reduce((n, f) => n + sizeOf(f), 0);

export const sherlockArchiveImport: ExportEntry = {
  name: 'sherlock import archive',
  format: 'WARC',
  how: 'sherlock: `sherlock import archive --state EMPTY FILE…` over the WARC export of the generated set: read, inflate, parse each capture as a fetch (gatherer.parse_workers threads), append its bucket.',
  available: cliBuilt,
  async export(ctx, dir): Promise<ExportResult> {
    const files = await warcOfSet(ctx, await arcSet(ctx));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const r = check('sherlock import archive', await run(process.execPath, [cli(ctx), 'import', 'archive', '--json', '--state', dir, ...files], { timeoutMs: 3_600_000 }));
    const report = JSON.parse(r.stdout) as { imported: number };
    return { wallMs: r.wallMs, records: report.imported, outBytes: inputBytes(files), peakRss: r.peakRss };
  },
};

/** The floor (bench/peers/parse-floor.ts): the same files read and every capture parsed on one thread, nothing stored. */
export const parseFloor: ExportEntry = {
  name: 'floor: read + parse, one thread',
  format: 'WARC',
  how: 'Floor: `node dist/bench/peers/parse-floor.js FILE…` reads the same WARC files with the import’s readers and parses each capture a fetch would parse with the gatherer’s own parse (HTML, charset, language, bucket body), on one thread, storing nothing: an import on T parse threads cannot beat T × its rate.',
  available: cliBuilt,
  async export(ctx): Promise<ExportResult> {
    const files = await warcOfSet(ctx, await arcSet(ctx));
    const r = check('parse floor', await run(process.execPath, [join(ctx.distDir, 'peers', 'parse-floor.js'), ...files], { timeoutMs: 3_600_000 }));
    const report = JSON.parse(r.stdout) as { records: number };
    return { wallMs: r.wallMs, records: report.records, outBytes: inputBytes(files), peakRss: r.peakRss };
  },
};

export function warcioArchiveRead(ctx: BenchContext): ExportEntry {
  const warcio = warcioBin(ctx);
  return {
    name: `warcio.js ${warcio?.version ?? '?'} cdx-index`,
    format: 'WARC',
    how: 'Peer: `warcio cdx-index` (npm warcio) over the same WARC files, output to /dev/null: read, inflate, digest; no parse.',
    async available(): Promise<Availability> {
      return warcio === undefined ? { status: 'unavailable', reason: 'warcio not installed (npm install)' } : true;
    },
    async export(c): Promise<ExportResult> {
      const files = await warcOfSet(c, await arcSet(c));
      const r = check('warcio cdx-index', await run('sh', ['-c', 'exec "$@" > /dev/null', 'sh', process.execPath, warcio!.cli, 'cdx-index', ...files], { timeoutMs: 1_800_000 }));
      // One line per response and request record: the set's WARC export has one response (or resource, revisit) per capture and no requests.
      return { wallMs: r.wallMs, records: (await arcSet(c)).records, outBytes: inputBytes(files), peakRss: r.peakRss };
    },
  };
}
