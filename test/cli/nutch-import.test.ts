/**
 * `sherlock import nutch` on the real crawldbs of the test data (written by
 * Nutch 1.21, 1.15 and 0.8): every record becomes a row whose fields are the
 * datum's; and on damaged crawldbs: a truncated file, wrong magic, an unknown
 * class, a corrupt compressed block and keys out of order each stop the
 * import with exit 1 and a line naming the file and the offset.
 */

import assert from 'node:assert/strict';
import { copyFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { encodeText } from '../../common/hadoop/io.js';
import { encodeWritable, LONG, mapGet, TEXT } from '../../common/hadoop/writables.js';
import { staticWeight } from '../../common/index/cardinfo.js';
import { MapFileReader } from '../../common/hadoop/map-file.js';
import { CRAWL_DATUM, CRAWL_STATUS, type CrawlDatum, type ProtocolStatus } from '../../common/hadoop/nutch-writables.js';
import { decodeRecord, recordTypes, SequenceFileWriter } from '../../common/hadoop/sequence-file.js';
import { canonicalUrl } from '../../common/url.js';
import { runCli } from '../helpers/cli.js';
import { nutchData } from '../helpers/nutch-data.js';
import { scratchDir } from '../helpers/paths.js';

interface Row {
  url: string;
  state: number;
  depth: number;
  last_fetch: number | null;
  next_fetch: number | null;
  interval: number | null;
  retries: number;
  checksum: Buffer | null;
  last_modified: number | null;
  weight: number;
  redirect: string | null;
}

function rows(state: string): Map<string, Row> {
  const db = new Database(join(state, 'shepherd', 'urls.sqlite'), { readonly: true });
  try {
    const all = db.prepare(`SELECT url, state, depth, last_fetch, next_fetch, interval, retries, checksum, last_modified, weight, redirect FROM urls`).all() as Row[];
    return new Map(all.map((r) => [r.url, r]));
  } finally {
    db.close();
  }
}

function crawlDb(part: string): Array<{ url: string; datum: CrawlDatum }> {
  const reader = MapFileReader.open(part);
  try {
    const types = recordTypes(reader.data);
    return [...reader.records()].map((r) => {
      const { key, value } = decodeRecord(reader.data.file, types, r);
      return { url: key as string, datum: value as CrawlDatum };
    });
  } finally {
    reader.close();
  }
}

const STATES = ['new', 'queued', 'ok', 'not_modified', 'redirect', 'error', 'gone', 'duplicate', 'disallowed'];

test('the real Nutch 1.21 crawldb imports whole: every record a row with its status, times, interval, score and signature', async (t) => {
  const state = scratchDir(t);
  const crawl = nutchData('nutch-1.21-crawl');
  const run = await runCli(['import', 'nutch', '--state', state, crawl, '--json']);
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { parts: 2, records: 1118, added: 1118, known: 0, refused: 0 });

  const db = rows(state);
  const counts: Record<string, number> = {};
  for (const row of db.values()) counts[STATES[row.state]!] = (counts[STATES[row.state]!] ?? 0) + 1;
  // README: 1035 db_unfetched, 67 db_fetched, 11 db_redir_perm, 5 db_gone (all five robots_denied).
  assert.deepEqual(counts, { new: 1035, ok: 67, redirect: 11, disallowed: 5 });

  for (const part of ['part-r-00000', 'part-r-00001']) {
    for (const { url, datum } of crawlDb(join(crawl, 'crawldb', 'current', part))) {
      const row = db.get(canonicalUrl(url));
      assert.ok(row !== undefined, url);
      const fetchTime = Number(datum.fetchTime / 1000n);
      // A Nutch score back on the static weight's scale: 1.0 (injected) is about an average card's weight.
      assert.equal(row.weight, staticWeight(datum.score), url);
      assert.equal(row.retries, datum.retries, url);
      assert.equal(row.depth, 0, url);
      assert.deepEqual(row.checksum, datum.signature, url);
      assert.equal(row.last_modified, datum.modifiedTime > 0n ? Number(datum.modifiedTime / 1000n) : null, url);
      if (datum.status === CRAWL_STATUS.db_unfetched) {
        assert.deepEqual([row.next_fetch, row.interval, row.last_fetch], [null, null, null], url);
      } else if (datum.status === CRAWL_STATUS.db_gone) {
        assert.deepEqual([row.next_fetch, row.interval], [null, datum.fetchInterval], url);
      } else {
        assert.deepEqual([row.next_fetch, row.interval, row.last_fetch], [fetchTime, datum.fetchInterval, fetchTime - datum.fetchInterval], url);
      }
      if (datum.status === CRAWL_STATUS.db_redir_perm) {
        const pst = mapGet(datum.metadata, '_pst_')!.value as ProtocolStatus;
        assert.equal(row.redirect, canonicalUrl(pst.args![0]!), url);
      }
    }
  }
});

test('the Nutch 1.15 and the legacy Nutch 0.8 crawldbs import with every record', async (t) => {
  for (const [dir, records, ok] of [
    ['nutch-1.15-crawl', 50, 0],
    ['nutch-1.15-dedup-crawldb', 10, 4],
    ['legacy-nutch-0.8-crawldb', 472, 19],
  ] as const) {
    const state = scratchDir(t);
    const run = await runCli(['import', 'nutch', '--state', state, nutchData(dir), '--json']);
    assert.equal(run.status, 0, run.stderr);
    const counts = JSON.parse(run.stdout) as { records: number; added: number; refused: number };
    assert.equal(counts.records, records, dir);
    assert.equal(counts.added + counts.refused, records, dir);
    const db = rows(state);
    assert.equal(db.size, counts.added, dir);
    assert.equal([...db.values()].filter((r) => STATES[r.state] === 'ok').length, ok, dir);
  }
});

/** A copy of the 1.15 crawldb's one part, to damage. */
function partCopy(t: import('node:test').TestContext): { dir: string; data: string; index: string } {
  const dir = join(scratchDir(t), 'crawldb', 'current', 'part-r-00000');
  cpSync(nutchData('nutch-1.15-crawl', 'crawldb', 'current', 'part-r-00000'), dir, { recursive: true });
  return { dir, data: join(dir, 'data'), index: join(dir, 'index') };
}

async function assertImportFails(t: import('node:test').TestContext, path: string, file: string, message: RegExp): Promise<number> {
  const run = await runCli(['import', 'nutch', '--state', scratchDir(t), path]);
  assert.equal(run.status, 1, run.stderr);
  const m = new RegExp(`^sherlock: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: offset (\\d+): (.*)$`, 'm').exec(run.stderr);
  assert.ok(m !== null, `no line naming ${file} and an offset in: ${run.stderr}`);
  assert.match(m[2]!, message);
  return Number(m[1]);
}

test('a truncated crawldb stops the import at the cut record, naming file and offset', async (t) => {
  const { dir, data } = partCopy(t);
  const bytes = readFileSync(data);
  writeFileSync(data, bytes.subarray(0, bytes.length - 40));
  const offset = await assertImportFails(t, dir, data, /past the end of the file/);
  assert.ok(offset > 0 && offset < bytes.length - 40);
});

test('a crawldb without the SEQ magic is refused at offset 0', async (t) => {
  const { dir, data } = partCopy(t);
  const bytes = readFileSync(data);
  bytes.write('XEQ', 0, 'latin1');
  writeFileSync(data, bytes);
  assert.equal(await assertImportFails(t, dir, data, /not a SequenceFile/), 0);
});

test('a crawldb naming an unknown value class is refused at the class name', async (t) => {
  const { dir, data } = partCopy(t);
  const bytes = readFileSync(data);
  const at = bytes.indexOf('org.apache.nutch.crawl.CrawlDatum');
  bytes.write('org.apache.nutch.crawl.CrawlDatuX', at, 'latin1');
  writeFileSync(data, bytes);
  assert.equal(await assertImportFails(t, dir, data, /unknown value class org\.apache\.nutch\.crawl\.CrawlDatuX/), at - 1);
});

test('a corrupt compressed block in the index stops the import, naming the index and the block', async (t) => {
  const { dir, index } = partCopy(t);
  const bytes = readFileSync(index);
  // The last unit of the one block (the offsets) ends the file: break its deflate stream.
  bytes[bytes.length - 6] ^= 0xff;
  writeFileSync(index, bytes);
  await assertImportFails(t, dir, index, /does not decompress/);
});

test('a crawldb whose keys are out of order stops the import at the first key out of place', async (t) => {
  const dir = join(scratchDir(t), 'part-r-00000');
  const datum: CrawlDatum = { status: 1, fetchTime: 1_700_000_000_000n, retries: 0, fetchInterval: 2_592_000, score: 1, modifiedTime: 0n, signature: null, metadata: null };
  const options = { keyClass: TEXT.className, valueClass: CRAWL_DATUM.className };
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dir);
  const data = SequenceFileWriter.create(join(dir, 'data'), options);
  const first = data.position;
  data.append(encodeText('http://b.example/'), encodeWritable(CRAWL_DATUM, datum));
  const second = data.position;
  data.append(encodeText('http://a.example/'), encodeWritable(CRAWL_DATUM, datum));
  data.close();
  const index = SequenceFileWriter.create(join(dir, 'index'), { keyClass: TEXT.className, valueClass: LONG.className, compression: 'block' });
  index.append(encodeText('http://b.example/'), encodeWritable(LONG, BigInt(first)));
  index.close();
  assert.equal(await assertImportFails(t, dir, join(dir, 'data'), /key out of order/), second);
});

test('a directory that is not a crawldb, or a MapFile of other values, is refused by name', async (t) => {
  const linkdb = nutchData('nutch-1.21-crawl', 'linkdb', 'current', 'part-r-00000');
  await assertImportFails(t, linkdb, join(linkdb, 'data'), /crawldb values are org\.apache\.nutch\.crawl\.Inlinks, not CrawlDatum/);
  const empty = scratchDir(t);
  copyFileSync(nutchData('README.md'), join(empty, 'README.md'));
  const run = await runCli(['import', 'nutch', '--state', scratchDir(t), empty]);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /no crawldb here/);
});
