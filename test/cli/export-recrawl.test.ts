/**
 * A recrawl's 304s through the Wayback exports, end to end: a real crawl,
 * a refetch and a second crawl store 304 Not Modified records for the
 * unchanged pages (gatherer/fetch.ts archives every response). `export cdx`
 * leaves them out by default (IA's CDX-Writer rule), `export warc` writes them
 * as server-not-modified revisits naming the 200 they confirm, and replaying
 * through pywb's revisit logic (pywb/warcserver/resource/resolvingloader.py,
 * re-enacted below over our own index of our WARC files) serves the earlier
 * 200's body, not a bare 304.
 */

import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { arcDir } from '../../common/archive/arc-place.js';
import { readArc } from '../../common/archive/arc-read.js';
import { CDX_LEGEND, parseCdxLine, type CdxFields } from '../../common/archive/cdx.js';
import { httpPayloadOffset, httpStatus } from '../../common/archive/digest.js';
import { surt } from '../../common/archive/surt.js';
import { NOT_MODIFIED_PROFILE } from '../../common/archive/warc.js';
import { WarcReader, warcDateDigits, warcField, warcTargetUri } from '../../common/archive/warc-read.js';
import { runCli } from '../helpers/cli.js';
import { startFixture, type RouteHandler } from '../helpers/http-fixtures.js';
import { scratchDir } from '../helpers/paths.js';

/** What pywb serves for a capture: the status of the HTTP head it uses and the body. */
interface Served {
  status: number | undefined;
  body: string;
  /** The line that gave the payload. */
  payload: CdxFields;
}

/** pywb's "closest": the line whose timestamp is nearest to `timestamp` (14 digits). */
function closest(lines: CdxFields[], timestamp: string): CdxFields | undefined {
  const distance = (f: CdxFields): number => Math.abs(Number(f.timestamp) - Number(timestamp));
  return [...lines].sort((a, b) => distance(a) - distance(b))[0];
}

/**
 * Replays `url` at `timestamp` as pywb does: the closest line of its key; for
 * a `warc/revisit` line, the revisit record's WARC-Refers-To-Target-URI and
 * -Date (the line's own timestamp without one) and the line's digest (no
 * filter when `-`) find the closest non-revisit line, whose record gives the
 * payload; the HTTP head is the revisit's if it has one, else the payload's.
 */
function replay(index: CdxFields[], dir: string, url: string, timestamp: string): Served {
  const load = (f: CdxFields) => {
    const reader = WarcReader.open(join(dir, f.filename));
    try {
      return reader.recordAt(Number(f.offset));
    } finally {
      reader.close();
    }
  };
  const line = closest(index.filter((f) => f.key === surt(url)), timestamp)!;
  const head = load(line);
  let payloadLine = line;
  if (line.mime === 'warc/revisit') {
    const refUri = warcField(head, 'WARC-Refers-To-Target-URI');
    assert.ok(refUri !== undefined, 'a revisit without WARC-Refers-To-Target-URI cannot be resolved');
    const refDate = warcField(head, 'WARC-Refers-To-Date');
    const candidates = index.filter((f) => f.key === surt(refUri) && f.mime !== 'warc/revisit' && (line.digest === '-' || f.digest === line.digest));
    payloadLine = closest(candidates, refDate === undefined ? line.timestamp : warcDateDigits(refDate)!)!;
    assert.ok(payloadLine !== undefined, 'Original for revisit record could not be loaded');
  }
  const payload = line === payloadLine ? head : load(payloadLine);
  const http = head.block.length > 0 ? head.block : payload.block;
  return { status: httpStatus(http), body: payload.block.toString('latin1', httpPayloadOffset(payload.block)), payload: payloadLine };
}

function readIndex(path: string): CdxFields[] {
  return readFileSync(path, 'latin1').split('\n').filter((l) => l !== '' && l !== CDX_LEGEND).map((l) => parseCdxLine(l)!);
}

test('a recrawl’s 304s: left out of the CDX, revisits in the WARC that replay the earlier 200 as pywb resolves them', async (t) => {
  const state = scratchDir(t);
  let edition = 1;
  const routes: Record<string, RouteHandler> = {};
  const pages: Record<string, () => string> = {
    '/': () => '<title>home</title><a href="/same">same</a> <a href="/changes">changes</a>',
    '/same': () => '<title>same</title><p>never changes</p>',
    '/changes': () => `<title>changes</title><p>edition ${edition}</p>`,
  };
  for (const [path, body] of Object.entries(pages)) {
    routes[path] = (req: IncomingMessage, res: ServerResponse) => {
      const etag = `"${path}-${path === '/changes' ? edition : 1}"`;
      if (req.headers['if-none-match'] === etag) res.writeHead(304, { ETag: etag }).end();
      else res.writeHead(200, { 'Content-Type': 'text/html', ETag: etag }).end(body());
    };
  }
  const site = await startFixture({ address: '127.0.0.196', routes });
  t.after(() => site.close());
  const seeds = join(state, 'seeds.txt');
  writeFileSync(seeds, `${site.origin}/\n`);
  const crawl = async (): Promise<void> => {
    const run = await runCli(['crawl', '--state', state, '--seeds', seeds, '--until-idle', '--set', 'gatherer.allow_private_addresses=true', '--set', 'gatherer.min_delay=0s']);
    assert.equal(run.status, 0, run.stderr);
  };
  await crawl();
  // Fetch times are whole seconds: the second crawl must be later.
  await new Promise((r) => setTimeout(r, 1100));
  edition = 2;
  assert.equal((await runCli(['shepherd', 'refetch', '--state', state, '--all'])).status, 0);
  await crawl();

  const same = `${site.origin}/same`;
  const arcs = readdirSync(arcDir(state)).filter((n) => n.endsWith('.arc.gz')).sort();
  const captures = arcs.flatMap((name) => [...readArc(join(arcDir(state), name))].filter((r) => r.header.url === same).map((r) => ({ name, status: httpStatus(r.content), date: r.header.date })));
  assert.deepEqual(captures.map((c) => c.status), [200, 304], 'the gatherer archives the 304 of the recrawl');
  const [first, recrawl] = captures as [(typeof captures)[0], (typeof captures)[0]];
  assert.notEqual(first.name, recrawl.name, 'each crawl run writes its own ARC file');

  // CDX of the ARC files: the 304s are out unless asked for.
  const dir = scratchDir(t);
  const plain = join(dir, 'arc.cdx');
  assert.equal((await runCli(['export', 'cdx', '--state', state, '--out', plain])).status, 0);
  assert.deepEqual(readIndex(plain).filter((f) => f.original === same).map((f) => [f.timestamp, f.status]), [[first.date, '200']]);
  assert.ok(readIndex(plain).every((f) => f.status !== '304'));
  const all = join(dir, 'arc-all.cdx');
  assert.equal((await runCli(['export', 'cdx', '--state', state, '--out', all, '--include-304'])).status, 0);
  assert.deepEqual(readIndex(all).filter((f) => f.original === same).map((f) => f.status), ['200', '304']);

  // WARC: the 304 is a revisit naming the 200 it confirms.
  const warcs = join(dir, 'warc');
  mkdirSync(warcs);
  assert.equal((await runCli(['export', 'warc', '--state', state, '--out', warcs])).status, 0);
  const revisitFile = recrawl.name.replace(/\.arc\.gz$/, '.warc.gz');
  const records = [...(function* () {
    const reader = WarcReader.open(join(warcs, revisitFile));
    try {
      yield* reader.records();
    } finally {
      reader.close();
    }
  })()];
  const revisit = records.find((r) => warcTargetUri(r) === same)!;
  assert.equal(warcField(revisit, 'WARC-Type'), 'revisit');
  assert.equal(warcField(revisit, 'WARC-Profile'), NOT_MODIFIED_PROFILE);
  assert.equal(warcField(revisit, 'WARC-Refers-To-Target-URI'), same);
  assert.equal(warcDateDigits(warcField(revisit, 'WARC-Refers-To-Date')!), first.date);
  assert.equal(revisit.block.length, 0);

  // Replay through our index of our WARC files, revisits included as pywb's indexer includes them.
  const index = join(dir, 'warc.cdx');
  const r = await runCli(['export', 'cdx', '--arc', ...readdirSync(warcs).map((n) => join(warcs, n)), '--out', index, '--include-304']);
  assert.equal(r.status, 0, r.stderr);
  const lines = readIndex(index);
  const revisitLine = lines.find((f) => f.original === same && f.timestamp === recrawl.date)!;
  assert.deepEqual([revisitLine.mime, revisitLine.status], ['warc/revisit', '-']);
  const served = replay(lines, warcs, same, recrawl.date);
  assert.deepEqual([served.status, served.body, served.payload.timestamp], [200, pages['/same']!(), first.date]);
  // The changed page replays its new edition.
  assert.equal(replay(lines, warcs, `${site.origin}/changes`, recrawl.date).body, pages['/changes']!());

  // The recrawl's file alone has no 200 to name: the revisit points at its own URL, without date or digest,
  // and pywb finds the closest capture of that URL in the collection (here: the first crawl's WARC).
  const alone = join(dir, 'alone');
  mkdirSync(alone);
  assert.equal((await runCli(['export', 'warc', '--arc', join(arcDir(state), recrawl.name), '--out', alone])).status, 0);
  const lone = WarcReader.open(join(alone, revisitFile));
  t.after(() => lone.close());
  const orphan = [...lone.records()].find((rec) => warcTargetUri(rec) === same)!;
  assert.equal(warcField(orphan, 'WARC-Refers-To-Target-URI'), same);
  assert.deepEqual([warcField(orphan, 'WARC-Refers-To-Date'), warcField(orphan, 'WARC-Payload-Digest')], [undefined, undefined]);
  const mixed = join(dir, 'mixed.cdx');
  const firstWarc = join(warcs, first.name.replace(/\.arc\.gz$/, '.warc.gz'));
  assert.equal((await runCli(['export', 'cdx', '--arc', firstWarc, join(alone, revisitFile), '--out', mixed, '--include-304'])).status, 0);
  const mixedLines = readIndex(mixed).map((f) => ({ ...f, filename: f.filename === revisitFile ? join('..', 'alone', revisitFile) : f.filename }));
  const orphanServed = replay(mixedLines, warcs, same, recrawl.date);
  assert.deepEqual([orphanServed.status, orphanServed.body], [200, pages['/same']!()]);
});
