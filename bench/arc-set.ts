/**
 * A generated ARC set for the export benchmark: `records` captures written by
 * sherlock's own ARC writer (`common/archive/arc-write.ts`, gzip level 1 as the
 * gatherer writes) into 100 MB files, made once and cached in
 * `bench/work/arc-set-<records>/` (a `done` file holds what was made).
 *
 * The captures look like a crawl of many sites: 2,000 hosts, HTML pages of
 * 0.5–2.5 KB of text (85 %), redirects with empty bodies (8 %), 404s (4 %),
 * small images (3 %); URLs with paths and some queries, fetch times spread over
 * a day. A seeded generator makes the same set every time.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArcWriter } from '../common/archive/arc-write.js';

export interface ArcSet {
  dir: string;
  files: string[];
  records: number;
}

export const WORDS = 'archive index search crawl page document debian manual package system network server client file data user guide install config option value table query result link text'.split(' ');

/** xorshift32: fast and reproducible; quality is beside the point. */
export function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function listArcs(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.arc.gz'))
    .sort()
    .map((n) => join(dir, n));
}

/** The set of `records` captures, generated on first use. */
export async function ensureArcSet(workRoot: string, records: number, log: (line: string) => void): Promise<ArcSet> {
  const dir = join(workRoot, `arc-set-${records}`);
  const stamp = JSON.stringify({ records, version: 1 });
  const done = join(dir, 'done');
  if (existsSync(done) && readFileSync(done, 'utf8') === stamp) return { dir, files: listArcs(dir), records };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`exports: generating an ARC set of ${records.toLocaleString('en')} records in ${dir} (cached)`);
  const random = prng(records);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const start = Date.UTC(2024, 2, 1);
  const writer = await ArcWriter.open({ dir, prefix: 'set', level: 1, clock: () => new Date(start) });
  const pending: Array<Promise<unknown>> = [];
  for (let i = 0; i < records; i++) {
    const host = `${random() < 0.3 ? 'www.' : ''}site${Math.floor(random() * 2000)}.example.${pick(['com', 'org', 'net', 'de'])}`;
    const path = `/${pick(WORDS)}/${pick(WORDS)}-${i}${random() < 0.2 ? `?id=${Math.floor(random() * 1000)}&lang=${pick(['en', 'de', 'fr'])}` : '.html'}`;
    const kind = random();
    let head: string;
    let body = '';
    let contentType: string | undefined;
    if (kind < 0.85) {
      const words = Array.from({ length: 80 + Math.floor(random() * 320) }, () => pick(WORDS)).join(' ');
      body = `<html><head><title>${pick(WORDS)} ${i}</title></head><body><p>${words}</p><a href="/${pick(WORDS)}">${pick(WORDS)}</a></body></html>`;
      contentType = 'text/html; charset=utf-8';
      head = `HTTP/1.1 200 OK\r\nContent-Type: ${contentType}\r\n`;
    } else if (kind < 0.93) {
      head = `HTTP/1.1 301 Moved Permanently\r\nLocation: https://${host}${path}\r\n`;
    } else if (kind < 0.97) {
      body = '<html><body>not found</body></html>';
      contentType = 'text/html';
      head = `HTTP/1.1 404 Not Found\r\nContent-Type: ${contentType}\r\n`;
    } else {
      body = String.fromCharCode(...Array.from({ length: 300 }, () => Math.floor(random() * 256)));
      contentType = 'image/png';
      head = `HTTP/1.1 200 OK\r\nContent-Type: ${contentType}\r\n`;
    }
    const bodyBytes = Buffer.from(body, contentType === 'image/png' ? 'latin1' : 'utf8');
    const content = Buffer.concat([Buffer.from(`${head}Content-Length: ${bodyBytes.length}\r\n\r\n`), bodyBytes]);
    pending.push(writer.write({ url: `http://${host}${path}`, ip: `10.${i % 250}.${(i >> 8) % 250}.${(i >> 16) % 250 + 1}`, date: new Date(start + Math.floor(random() * 86_400_000)), contentType, content }));
    // Writes are queued inside the writer; waiting now and then keeps the queue short.
    if (pending.length >= 1000) await Promise.all(pending.splice(0));
    if (i > 0 && i % 200_000 === 0) log(`exports:   ${i.toLocaleString('en')} records`);
  }
  await Promise.all(pending);
  await writer.close();
  writeFileSync(done, stamp);
  return { dir, files: listArcs(dir), records };
}
