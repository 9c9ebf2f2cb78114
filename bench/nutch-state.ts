/**
 * A synthetic crawl state for the Nutch export benchmark: a URL database of
 * `urls` URLs on urls/100 sites, one in ten fetched (as a real frontier is
 * mostly not fetched yet), each fetched page an ARC record (HTML of 1–3 KB,
 * gzip level 1 as the gatherer writes) and its bucket (title, text, 20
 * anchors to other URLs of the crawl). Written through sherlock's own
 * writers (UrlDb, ArcWriter, BucketWriter), made once and cached in
 * `bench/work/nutch-state-<urls>/` (a `done` file holds what was made).
 */

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ArcWriter } from '../common/archive/arc-write.js';
import { BUCKET_TYPE, BucketObject, encodeBucket } from '../common/bucket/bucket.js';
import { BucketWriter, bucketFilePath } from '../common/bucket/file.js';
import { documentBody, noRobots, type Link } from '../common/bucket/doc-body.js';
import { TextBuilder } from '../common/bucket/doc-text.js';
import { arcAttribute, arcDir } from '../common/archive/arc-place.js';
import { UrlDb, type FetchOutcome } from '../shepherd/urldb.js';
import { prng, WORDS } from './arc-set.js';
import { check, run } from './measure.js';
import type { Availability, BenchContext, ExportEntry, ExportResult } from './parts.js';

const BATCH = 100_000;
const LINKS = 20;

/** URL number i: site i mod (urls/100), so a site's URLs spread over the whole range. */
function urlOf(i: number, sites: number): string {
  return `http://site${i % sites}.example.org/${WORDS[i % WORDS.length]}/page-${i}.html`;
}

/** The state directory, generated on first use. */
export async function ensureNutchState(workRoot: string, urls: number, log: (line: string) => void): Promise<string> {
  const state = join(workRoot, `nutch-state-${urls}`);
  const stamp = JSON.stringify({ urls, version: 1 });
  const done = join(state, 'done');
  if (existsSync(done) && readFileSync(done, 'utf8') === stamp) return state;
  rmSync(state, { recursive: true, force: true });
  log(`exports: generating a crawl state of ${urls.toLocaleString('en')} URLs in ${state} (cached)`);
  const sites = Math.max(1, Math.floor(urls / 100));
  const random = prng(urls);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const start = Date.UTC(2024, 2, 1) / 1000;
  const db = UrlDb.open(state, { max_urls_per_site: 1_000_000, max_depth: 1000 });
  const arc = await ArcWriter.open({ dir: arcDir(state), prefix: 'sherlock', level: 1, clock: () => new Date(start * 1000) });
  const buckets = BucketWriter.open(bucketFilePath(state));
  try {
    for (let from = 0; from < urls; from += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, urls - from) }, (_, k) => ({ url: urlOf(from + k, sites), depth: 1 }));
      db.inject(batch, start);
    }
    const results: FetchOutcome[] = [];
    for (let i = 0; i < urls; i += 10) {
      const url = urlOf(i, sites);
      const title = `${pick(WORDS)} ${i}`;
      const words = Array.from({ length: 150 + Math.floor(random() * 300) }, () => pick(WORDS));
      const targets = Array.from({ length: LINKS }, () => urlOf(Math.floor(random() * urls), sites));
      const html = `<html><head><title>${title}</title></head><body><p>${words.join(' ')}</p>${targets.map((t, n) => `<a href="${t}">${words[n]}</a>`).join(' ')}</body></html>`;
      const body = Buffer.from(html);
      const md5 = createHash('md5').update(body).digest('hex');
      const time = start + Math.floor(random() * 86_400);
      const content = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nETag: "${md5.slice(0, 8)}"\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
      const written = await arc.write({ url, ip: '127.0.0.1', date: new Date(time * 1000), contentType: 'text/html; charset=utf-8', content });
      const header = new BucketObject();
      for (const [name, value] of [['U', url], ['D', String(time)], ['H', '200'], ['T', 'text/html'], ['E', 'utf-8'], ['e', `"${md5.slice(0, 8)}"`], ['C', md5], ['k', '127.0.0.1'], ['a', arcAttribute(written)]] as const) {
        header.add(name, value);
      }
      const text = new TextBuilder(64 * 1024);
      text.append(words.join(' '));
      targets.forEach((_, n) => {
        text.openLink(n);
        text.append(words[n]!);
        text.closeLink();
      });
      const links: Link[] = targets.map((t) => ({ type: 'R', url: t }));
      const oid = buckets.append(BUCKET_TYPE.V33_DEFLATE, encodeBucket(BUCKET_TYPE.V33_DEFLATE, { header, body: documentBody({ title, text: text.finish(), metas: [], links, robots: noRobots() }) }));
      results.push({ url, time, code: 0, status: 200, checksum: md5, oid, etag: `"${md5.slice(0, 8)}"` });
      if (results.length >= BATCH / 10) db.recordResults(results.splice(0), time);
    }
    db.recordResults(results, start + 86_400);
    buckets.sync();
  } finally {
    await arc.close();
    buckets.close();
    db.close();
  }
  writeFileSync(done, stamp);
  return state;
}

/** URLs of the synthetic state for this run: 1,000,000 (100,000 under --quick). */
export function nutchStateSize(ctx: BenchContext): number {
  return ctx.opts.set === 'small' ? 100_000 : 1_000_000;
}

/** `sherlock export nutch --state` over the synthetic state: bytes written, time, peak RSS. */
export function sherlockNutchExport(ctx: BenchContext): ExportEntry {
  const cli = join(ctx.repoRoot, 'dist', 'cli', 'sherlock.js');
  return {
    name: 'sherlock export nutch --state',
    format: 'Nutch',
    how: 'sherlock: `sherlock export nutch --state DIR --out DIR` over the synthetic state (read the URL database, sort, read buckets and ARC records, write MapFiles with .crc files).',
    async available(): Promise<Availability> {
      return existsSync(cli) ? true : { status: 'not-built', reason: 'dist/cli/sherlock.js missing' };
    },
    async export(_ctx, dir): Promise<ExportResult> {
      const state = await ensureNutchState(join(ctx.repoRoot, 'bench', 'work'), nutchStateSize(ctx), ctx.log);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const out = join(dir, 'crawl');
      const r = check('sherlock export nutch', await run(process.execPath, [cli, 'export', 'nutch', '--state', state, '--out', out, '--json'], { timeoutMs: 1_800_000 }));
      const report = JSON.parse(r.stdout) as { urls: number; bytes: number };
      return { wallMs: r.wallMs, records: report.urls, outBytes: report.bytes, peakRss: r.peakRss };
    },
  };
}
