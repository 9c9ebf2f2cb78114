/**
 * A small crawl archived by the real ARC writer, for the export tests: HTML
 * (with a robots meta), a redirect with no body, a 404, a binary body, a URL
 * the writer must escape, a numeric host with a port and a query.
 */

import { join } from 'node:path';
import { ArcWriter, type ArcRecordInput } from '../../common/archive/arc-write.js';
import { repoRoot } from './paths.js';

/** npm warcio's CLI (`bin` of the package), the outside reader of our WARC files. */
export const warcioBin = join(repoRoot, 'node_modules', '.bin', 'warcio');

function response(status: string, headers: string[], body: Buffer | string): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([Buffer.from([`HTTP/1.1 ${status}`, ...headers, `Content-Length: ${bytes.length}`, '', ''].join('\r\n')), bytes]);
}

export const SAMPLE_RECORDS: ArcRecordInput[] = [
  {
    url: 'http://example.com/',
    ip: '93.184.216.34',
    date: new Date('2024-03-01T10:00:00Z'),
    contentType: 'text/html; charset=utf-8',
    content: response('200 OK', ['Content-Type: text/html; charset=utf-8'], '<html><head><meta name="robots" content="noarchive"><title>x</title></head><body>hello</body></html>'),
  },
  {
    url: 'http://example.com/old',
    ip: '93.184.216.34',
    date: new Date('2024-03-01T10:00:01Z'),
    content: response('301 Moved Permanently', ['Location: http://example.com/new'], ''),
  },
  {
    url: 'https://www.example.com:443/a b?q=é&a=1',
    ip: '93.184.216.34',
    date: new Date('2024-03-01T10:00:02Z'),
    contentType: 'text/plain',
    content: response('200 OK', ['Content-Type: text/plain'], 'plain text'),
  },
  {
    url: 'http://example.com/missing',
    ip: '93.184.216.34',
    date: new Date('2024-03-01T10:00:03Z'),
    contentType: 'text/html',
    content: response('404 Not Found', ['Content-Type: text/html'], '<p>not here</p>'),
  },
  {
    url: 'http://example.com/img.png',
    ip: '93.184.216.34',
    date: new Date('2024-03-01T10:00:04Z'),
    contentType: 'image/png',
    content: response('200 OK', ['Content-Type: image/png'], Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0xff, 0xfe])),
  },
  {
    url: 'http://127.0.0.1:8080/x?b=2&a=1',
    ip: '127.0.0.1',
    date: new Date('2024-03-01T10:00:05Z'),
    contentType: 'application/json',
    content: response('200 OK', ['Content-Type: application/json'], '{"a":1}'),
  },
];

/** Writes the sample records into `dir` (one `.arc.gz`, or several with a small `maxFileSize`); returns the file names. */
export async function writeSampleArc(dir: string, options: { maxFileSize?: number; compress?: boolean } = {}): Promise<string[]> {
  const writer = await ArcWriter.open({ dir, prefix: 'crawl', clock: () => new Date('2024-03-01T09:59:59Z'), ...options });
  const files = new Set<string>();
  for (const record of SAMPLE_RECORDS) files.add((await writer.write(record)).file);
  await writer.close();
  return [...files];
}
