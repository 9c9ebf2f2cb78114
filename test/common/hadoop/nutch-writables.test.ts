import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { isSherlockError } from '../../../common/errors.js';
import { DataReader } from '../../../common/hadoop/io.js';
import { decodeWritable, encodeWritable, MAP, mapGet, typed, type MapWritable, type Typed, type WritableType } from '../../../common/hadoop/writables.js';
import { MapFileReader } from '../../../common/hadoop/map-file.js';
import {
  CONTENT,
  CRAWL_DATUM,
  crawlStatusName,
  INLINKS,
  InlinksBuilder,
  metadataGet,
  PARSE_DATA,
  PARSE_TEXT,
  PROTOCOL_STATUS_WRITABLE,
  protocolStatusName,
  type Content,
  type CrawlDatum,
  type Link,
  type Metadata,
  type ParseData,
  type ProtocolStatus,
} from '../../../common/hadoop/nutch-writables.js';
import { decodeRecord, recordTypes, SequenceFileReader } from '../../../common/hadoop/sequence-file.js';
import { nutchData } from '../../helpers/nutch-data.js';

/** Every (key, value) of a SequenceFile, a MapFile or all parts of a directory, decoded. */
function records<V>(path: string): Array<[string, V]> {
  const out: Array<[string, V]> = [];
  const files = readdirSync(path).some((n) => n === 'data') ? [join(path, 'data')] : listParts(path);
  for (const file of files) {
    const reader = SequenceFileReader.open(file);
    const types = recordTypes(reader);
    for (const record of reader.records()) {
      const { key, value } = decodeRecord(file, types, record);
      out.push([String(key), value as V]);
    }
    reader.close();
  }
  return out;
}

function listParts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.name.startsWith('part-'))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((e) => (e.isDirectory() ? join(dir, e.name, 'data') : join(dir, e.name)));
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}

const statusOf = ([, d]: [string, CrawlDatum]): string => crawlStatusName(d.status);

test('the Nutch 1.10 fetch datum holds what the README says, and its metadata encodes as the spec shows', () => {
  const [[url, d]] = records<CrawlDatum>(nutchData('nutch-1.10-segments/20150309101625/crawl_fetch/part-00000')) as [[string, CrawlDatum]];
  assert.equal(url, 'http://nutch.apache.org/');
  assert.equal(d.status, 0x21);
  assert.equal(d.fetchTime, 1425921389382n);
  assert.equal(d.fetchInterval, 2592000);
  assert.equal(d.score, 1);
  assert.equal(mapGet(d.metadata, '_ngt_')?.value, 1425921383199n);
  assert.equal(mapGet(d.metadata, 'Content-Type')?.value, 'text/html');
  assert.deepEqual(mapGet(d.metadata, '_pst_')?.value, { code: 1, lastModified: 0n, args: null });
  assert.equal(mapGet(d.metadata, '_rs_')?.value, 341);
  const expected =
    '01 01 0028' +
    Buffer.from('org.apache.nutch.protocol.ProtocolStatus').toString('hex') +
    '00000004 8C05' +
    Buffer.from('_ngt_').toString('hex') +
    '86 0000014BFF899B1F 8C0C' +
    Buffer.from('Content-Type').toString('hex') +
    '8C09' +
    Buffer.from('text/html').toString('hex') +
    '8C05' +
    Buffer.from('_pst_').toString('hex') +
    '01 0201 0000000000000000 FFFFFFFF 8C04' +
    Buffer.from('_rs_').toString('hex') +
    '85 00000155';
  assert.equal(encodeWritable(MAP, d.metadata!).toString('hex'), expected.replace(/ /g, '').toLowerCase());
});

test('segment 20150309101625: content, 101 crawl_parse datums and the parse data the README lists', () => {
  const seg = (sub: string) => nutchData('nutch-1.10-segments/20150309101625', sub);
  const [[, content]] = records<Content>(seg('content/part-00000')) as [[string, Content]];
  assert.equal(content.contentType, 'text/html');
  assert.equal(content.content.length, 52639);
  assert.equal(metadataGet(content.metadata, '_fst_'), '33');
  assert.equal(metadataGet(content.metadata, '_ip_'), '88.198.26.2');
  assert.equal(metadataGet(content.metadata, 'nutch.segment.name'), '20150309101625');
  const parse = records<CrawlDatum>(seg('crawl_parse'));
  assert.deepEqual(countBy(parse, statusOf), { signature: 1, linked: 100 });
  assert.equal(parse.find(([, d]) => d.status === 0x41)![1].signature!.toString('hex'), '5892041b0709fe5a4f106dee5576ec6c');
  assert.ok(parse.filter(([, d]) => d.status === 0x43).every(([, d]) => d.score === Math.fround(0.01)));
  const [[, data]] = records<ParseData>(seg('parse_data/part-00000')) as [[string, ParseData]];
  assert.equal(data.title, 'Apache Nutch™ -');
  assert.deepEqual(data.status, { majorCode: 1, minorCode: 0, args: null });
  assert.equal(records<{ text: string }>(seg('parse_text/part-00000')).length, 1);
});

test('segment 20150309101656: fetch statuses and content types as the README counts them', () => {
  const seg = (sub: string) => nutchData('nutch-1.10-segments/20150309101656', sub);
  assert.deepEqual(countBy(records<CrawlDatum>(seg('crawl_fetch')), statusOf), {
    fetch_success: 39,
    fetch_gone: 7,
    fetch_redir_perm: 7,
    fetch_redir_temp: 3,
    fetch_retry: 1,
    linked: 4,
  });
  assert.deepEqual(countBy(records<Content>(seg('content')), ([, c]) => c.contentType), {
    'text/html': 38,
    'text/plain': 6,
    'application/xhtml+xml': 3,
    'application/octet-stream': 2,
  });
  assert.equal(records<CrawlDatum>(seg('crawl_parse')).length, 2598);
  const [first] = records<ParseData>(seg('parse_data'));
  assert.deepEqual([first![0], first![1].title], ['http://accumulo.apache.org/', 'Apache Accumulo']);
});

test('crawldbs: status totals, the minimal 29-byte datum, the redirect datum and the 2006 legacy datums', () => {
  const current = records<CrawlDatum>(nutchData('nutch-1.21-crawl/crawldb/current'));
  assert.deepEqual(countBy(current, statusOf), { db_unfetched: 1035, db_fetched: 67, db_redir_perm: 11, db_gone: 5 });
  const [url, first] = current[0]!;
  assert.equal(url, 'http://admission.gatech.edu/visit');
  assert.deepEqual(first, { status: 1, fetchTime: 1769822793534n, retries: 0, fetchInterval: 2592000, score: Math.fround(1e-4), modifiedTime: 0n, signature: null, metadata: null });
  assert.equal(encodeWritable(CRAWL_DATUM, first).toString('hex'), '0701' + '0000019c11a8af3e' + '00' + '00278d00' + '38d1b717' + '0000000000000000' + '00' + '00');
  assert.equal(current[557]![0], 'https://x.com/GeorgiaTech');

  const dedup = records<CrawlDatum>(nutchData('nutch-1.15-dedup-crawldb/current'));
  assert.deepEqual(countBy(dedup, statusOf), { db_redir_perm: 6, db_fetched: 4 });
  const [, redirect] = dedup[0]!;
  assert.equal(redirect.fetchTime, BigInt(Date.parse('2018-08-22T13:53:03.707Z')));
  assert.equal(redirect.modifiedTime, BigInt(Date.parse('2018-08-15T13:53:03.707Z')));
  assert.deepEqual(mapGet(redirect.metadata, '_pst_'), {
    className: PROTOCOL_STATUS_WRITABLE.className,
    value: { code: 12, lastModified: 0n, args: ['https://en.wikipedia.org/wiki/URL_redirection'] },
  });
  assert.equal(protocolStatusName(12), 'moved');

  const legacy = records<CrawlDatum>(nutchData('legacy-nutch-0.8-crawldb/current'));
  assert.deepEqual(countBy(legacy, statusOf), { db_unfetched: 453, db_fetched: 19 });
  assert.equal(legacy[0]![0], 'http://ant.apache.org/');
  assert.ok(legacy.every(([, d]) => d.fetchInterval === 30 && d.metadata === null));
});

test("a v5 datum's float interval reads as Java's Math.round: NaN 0, clamped to an int, never -0", () => {
  const v5 = (interval: number): number => {
    const bytes = Buffer.alloc(29);
    bytes[0] = 5;
    bytes[1] = 1;
    bytes.writeFloatBE(interval, 11);
    const datum = decodeWritable(CRAWL_DATUM, bytes, '(v5)', 0);
    // What it reads writes back (as v7, an int) and reads the same.
    assert.deepEqual(decodeWritable(CRAWL_DATUM, encodeWritable(CRAWL_DATUM, datum), '(v7)', 0), datum);
    return datum.fetchInterval;
  };
  assert.equal(v5(2592000), 2592000);
  assert.equal(v5(2.5), 3);
  assert.ok(Object.is(v5(-0.4), 0));
  assert.equal(v5(NaN), 0);
  assert.equal(v5(1e12), 2 ** 31 - 1);
  assert.equal(v5(-Infinity), -(2 ** 31));
});

test('Common Crawl content: a revisit with 0 bytes and multi-valued set-cookie headers', () => {
  const content = records<Content>(nutchData('commoncrawl-1.22-revisit-segment/20260224170658-revisit/content'));
  assert.deepEqual(
    content.map(([url, c]) => [url, c.contentType, c.content.length]),
    [
      ['https://de.wikipedia.org/robots.txt', 'text/x-robots', 18722],
      ['https://de.wikipedia.org/wiki/Wikipedia:WikiCon_2025', 'text/html', 0],
    ],
  );
  assert.ok(content.some(([, c]) => c.metadata.some(([name, values]) => name === 'set-cookie' && values.length > 1)));
});

// ---------------------------------------------------------------- readseg -dump

interface DumpRecord {
  url: string;
  blocks: Array<{ kind: string; text: string }>;
}

/** Splits `bin/nutch readseg -dump` output into records and their `Kind::` blocks. */
function parseSegmentDump(text: string): DumpRecord[] {
  return text
    .split(/\nRecno:: \d+\n/)
    .slice(1)
    .map((chunk) => {
      const url = /^URL:: (.*)\n/.exec(chunk)![1]!;
      const parts = chunk.split(/\n(CrawlDatum|Content|ParseData|ParseText)::\n/);
      const blocks: DumpRecord['blocks'] = [];
      for (let i = 1; i < parts.length; i += 2) blocks.push({ kind: parts[i]!, text: parts[i + 1]! });
      return { url, blocks };
    });
}

function typedText({ className, value }: Typed): string {
  if (className === PROTOCOL_STATUS_WRITABLE.className) {
    const s = value as ProtocolStatus;
    return `${protocolStatusName(s.code)}(${s.code}), lastModified=${s.lastModified}`;
  }
  return String(value);
}

/** The dump's fields of a CrawlDatum, times to the second (the dump prints local time without milliseconds). */
function datumFields(d: CrawlDatum): string {
  const seconds = (ms: bigint) => String(ms / 1000n);
  const meta = (d.metadata?.entries ?? []).map(([k, v]) => `${typedText(k)}=${typedText(v)}`).sort();
  const signature = d.signature === null ? 'null' : d.signature.toString('hex');
  return [d.status, crawlStatusName(d.status), seconds(d.fetchTime), seconds(d.modifiedTime), d.retries, d.fetchInterval, d.score, signature, ...meta].join('|');
}

function dumpDatumFields(text: string): string {
  const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(text)![1]!;
  const [, status, name] = /^(\d+) \((\w+)\)$/.exec(field('Status'))!;
  const time = (s: string) => String(Date.parse(s.replace(/^\w+ (\w+) (\d+) ([\d:]+) (\w+) (\d+)$/, '$1 $2 $5 $3 $4')) / 1000);
  const meta = text
    .slice(text.indexOf('Metadata: \n') + 'Metadata: \n'.length)
    .split('\n')
    .map((line) => line.replace(/^ ?\t/, ''))
    .filter((line) => line.trim() !== '')
    .sort();
  return [status, name, time(field('Fetch time')), time(field('Modified time')), field('Retries since fetch'), /^(-?\d+)/.exec(field('Retry interval'))![1], Math.fround(Number(field('Score'))), field('Signature'), ...meta].join('|');
}

/** A Metadata line of the dump (`name=value ` per value, in the writer's HashMap order) holds exactly these pairs. */
function assertMetadataLine(line: string, metadata: Metadata): void {
  const pairs = metadata.flatMap(([name, values]) => values.map((v) => `${name}=${v} `));
  assert.equal(line.length, pairs.reduce((n, p) => n + p.length, 0), line);
  for (const pair of pairs) assert.ok(line.includes(pair), pair);
}

test('the Nutch 1.15 segment reads as its readseg -dump shows, record by record', () => {
  const seg = (sub: string) => nutchData('nutch-1.15-crawl/segments/20180519032314', sub);
  const datums = new Map<string, CrawlDatum[]>();
  for (const sub of ['crawl_generate', 'crawl_fetch', 'crawl_parse']) {
    for (const [url, d] of records<CrawlDatum>(seg(sub))) datums.set(url, [...(datums.get(url) ?? []), d]);
  }
  const content = new Map(records<Content>(seg('content')));
  const parseData = new Map(records<ParseData>(seg('parse_data')));
  const parseText = new Map(records<{ text: string }>(seg('parse_text')));
  const dump = parseSegmentDump(readFileSync(nutchData('nutch-1.15-crawl/dump-segments1/dump'), 'utf8'));
  assert.equal(dump.length, 50);
  assert.deepEqual(dump.map((r) => r.url).sort(), [...datums.keys()].sort());
  let blocks = 0;
  for (const { url, blocks: dumped } of dump) {
    const inDump = dumped.filter((b) => b.kind === 'CrawlDatum').map((b) => dumpDatumFields(b.text));
    assert.deepEqual(inDump.sort(), datums.get(url)!.map(datumFields).sort(), url);
    for (const { kind, text } of dumped) {
      blocks += 1;
      if (kind === 'Content') {
        const c = content.get(url)!;
        assert.equal(/^url: (.*)$/m.exec(text)![1], c.url);
        assert.equal(/^base: (.*)$/m.exec(text)![1], c.base);
        assert.equal(/^contentType: (.*)$/m.exec(text)![1], c.contentType);
        assertMetadataLine(/^metadata: (.*)$/m.exec(text)![1]!, c.metadata);
        const body = text.slice(text.indexOf('\nContent:\n') + '\nContent:\n'.length);
        assert.ok(body.startsWith(c.content.toString('utf8').slice(0, -1)), 'content bytes');
        assert.equal(c.content.length, 65536);
      } else if (kind === 'ParseData') {
        const p = parseData.get(url)!;
        assert.equal(/^Title: (.*)$/m.exec(text)![1], p.title);
        assert.equal(/^Status: (.*)$/m.exec(text)![1], 'success(1,0)');
        const outlinks = [...text.matchAll(/^ {2}outlink: toUrl: (.*) anchor: (.*)$/gm)].map((m) => [m[1], m[2]]);
        assert.deepEqual(outlinks, p.outlinks.map((o) => [o.url, o.anchor]));
        assertMetadataLine(/^Content Metadata: (.*)$/m.exec(text)![1]!, p.contentMeta);
        assertMetadataLine(/^Parse Metadata: (.*)$/m.exec(text)![1]!, p.parseMeta);
      } else if (kind === 'ParseText') {
        assert.equal(text.trim(), parseText.get(url)!.text.trim());
      }
    }
  }
  assert.equal(blocks, 101 + 1 + 1 + 1 + 1 + 1);
});

test('the Nutch 1.21 linkdb reads as its readlinkdb -dump shows', () => {
  const ours = records<Link[]>(nutchData('nutch-1.21-crawl/linkdb/current'));
  assert.equal(ours.length, 438);
  const dump = readFileSync(nutchData('nutch-1.21-crawl/readlinkdb-dump/part-r-00000'), 'utf8');
  const entries = dump.split('\n\n').filter((e) => e.trim() !== '');
  const fromDump = new Map(
    entries.map((entry) => {
      const [head, ...lines] = entry.split('\n');
      const url = head!.replace(/\tInlinks:$/, '');
      return [url, lines.map((l) => /^ fromUrl: (.*) anchor: (.*) metadata: $/.exec(l)!.slice(1, 3).join(' | ')).sort()];
    }),
  );
  assert.equal(fromDump.size, 438);
  for (const [url, inlinks] of ours) {
    assert.deepEqual(inlinks.map((l) => `${l.url} | ${l.anchor}`).sort(), fromDump.get(url), url);
  }
  const [first] = ours;
  assert.deepEqual(first, ['http://admission.gatech.edu/visit', [{ url: 'https://www.gatech.edu/about/visit', anchor: 'Undergraduate Campus Visit Scheduling', metadata: null }]]);
});

test('MapFile lookups return the decoded records of every Nutch type', () => {
  const map = MapFileReader.open(nutchData('nutch-1.21-crawl/segments/20260130202548/parse_data/part-r-00000'));
  const found = map.get(Buffer.from('\u001ahttps://www.cc.gatech.edu/', 'latin1'))!;
  map.close();
  assert.equal(decodeWritable(PARSE_DATA, found.value, '', 0).title, 'College of Computing');
});

// ---------------------------------------------------------------- round trips and damage

/** Drops the `classes` lists readers add to MapWritables, for comparing with generated values. */
function withoutClasses(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutClasses);
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value) && typeof value !== 'bigint') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'classes').map(([k, v]) => [k, withoutClasses(v)]));
  }
  return value;
}

function roundTrips<T>(type: WritableType<T>, value: T): void {
  const bytes = encodeWritable(type, value);
  const back = decodeWritable(type, bytes, 'mem', 0);
  assert.deepEqual(withoutClasses(back), withoutClasses(value));
  assert.ok(encodeWritable(type, back).equals(bytes));
}

const text = fc.string({ maxLength: 20 });
const strings = fc.option(fc.array(fc.option(text, { nil: null }), { maxLength: 3 }), { nil: null });
const protocolStatus = fc.record({ code: fc.integer({ min: 0, max: 255 }), lastModified: fc.bigInt({ min: 0n, max: 2n ** 62n }), args: strings });
const typedValue: fc.Arbitrary<Typed> = fc.oneof(
  text.map(typed.text),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map(typed.int),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(typed.long),
  fc.float({ noNaN: true }).map(typed.float),
  protocolStatus.map((value) => ({ className: PROTOCOL_STATUS_WRITABLE.className, value })),
);
const map: fc.Arbitrary<MapWritable> = fc.array(fc.tuple(text.map(typed.text), typedValue), { minLength: 1, maxLength: 5 }).map((entries) => ({ entries }));
const metadata: fc.Arbitrary<Metadata> = fc.array(fc.tuple(text, fc.array(text, { maxLength: 3 })), { maxLength: 4 });
const link: fc.Arbitrary<Link> = fc.record({ url: text, anchor: text, metadata: fc.option(map, { nil: null }) });
const datum: fc.Arbitrary<CrawlDatum> = fc.record({
  status: fc.integer({ min: 0, max: 127 }),
  fetchTime: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  retries: fc.integer({ min: -128, max: 127 }),
  fetchInterval: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  score: fc.float({ noNaN: true }),
  modifiedTime: fc.bigInt({ min: 0n, max: 2n ** 62n }),
  signature: fc.option(fc.uint8Array({ minLength: 1, maxLength: 127 }).map((b) => Buffer.from(b)), { nil: null }),
  metadata: fc.option(map, { nil: null }),
});

test('property: every Nutch writable round-trips byte for byte', () => {
  fc.assert(fc.property(datum, (d) => roundTrips(CRAWL_DATUM, d)), { numRuns: 300 });
  fc.assert(
    fc.property(text, text, fc.uint8Array({ maxLength: 200 }), text, metadata, (url, base, body, contentType, meta) =>
      roundTrips(CONTENT, { url, base, content: Buffer.from(body), contentType, metadata: meta }),
    ),
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 }), fc.integer({ min: -32768, max: 32767 }), strings, text, fc.array(link, { maxLength: 5 }), metadata, metadata, (majorCode, minorCode, args, title, outlinks, contentMeta, parseMeta) =>
      roundTrips(PARSE_DATA, { status: { majorCode, minorCode, args }, title, outlinks, contentMeta, parseMeta }),
    ),
  );
  fc.assert(fc.property(text, (t) => roundTrips(PARSE_TEXT, { text: t })));
  fc.assert(fc.property(fc.array(link, { maxLength: 6 }), (links) => roundTrips(INLINKS, links)));
});

test('a CrawlDatum whose metadata flag is set over an empty map reads as no metadata, and writes back so (found by fuzzing)', () => {
  const datum: CrawlDatum = { status: 1, fetchTime: 0n, retries: 0, fetchInterval: 60, score: 1, modifiedTime: 0n, signature: null, metadata: null };
  const plain = encodeWritable(CRAWL_DATUM, datum);
  assert.equal(plain.at(-1), 0, 'no metadata: the flag is 0');
  const flagged = Buffer.concat([plain.subarray(0, -1), Buffer.from([1]), encodeWritable(MAP, { entries: [] })]);
  const read = decodeWritable(CRAWL_DATUM, flagged, 'f', 0);
  assert.equal(read.metadata, null);
  assert.deepEqual(decodeWritable(CRAWL_DATUM, encodeWritable(CRAWL_DATUM, read), 'f', 0), read);
});

test('unknown classes, unknown versions and leftover bytes are errors naming the place', () => {
  const [, d] = records<CrawlDatum>(nutchData('nutch-1.10-segments/20150309101625/crawl_fetch/part-00000'))[0]!;
  const bytes = encodeWritable(CRAWL_DATUM, d);
  const unknown = Buffer.from(bytes.toString('latin1').replace('ProtocolStatus', 'ProtocolStatuz'), 'latin1');
  const fails = (b: Buffer, offset: number, message: RegExp) =>
    assert.throws(
      () => decodeWritable(CRAWL_DATUM, b, 'f', 1000),
      (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_HADOOP') && err.place.file === 'f' && err.place.offset === offset && message.test(err.message),
    );
  fails(unknown, 1000 + 30, /unknown class org\.apache\.nutch\.protocol\.ProtocolStatuz/);
  fails(Buffer.concat([Buffer.from([8]), bytes.subarray(1)]), 1000, /CrawlDatum version 8/);
  fails(Buffer.concat([bytes, Buffer.from([0])]), 1000 + bytes.length, /1 bytes left over/);
  fails(bytes.subarray(0, 40), 1000 + 31, /class name of 40 bytes runs past the end/);
  const content = encodeWritable(CONTENT, { url: 'u', base: 'u', content: Buffer.alloc(0), contentType: 't', metadata: [] });
  assert.throws(() => CONTENT.read(new DataReader(Buffer.concat([Buffer.from([0, 0, 0, 5]), content.subarray(4)]), 'f', 0)), /compressed Content/);
  // An undeclared custom class id inside a MapWritable.
  assert.throws(() => decodeWritable(MAP, Buffer.from('00' + '00000001' + '8c0161' + '05', 'hex'), 'f', 0), /undeclared class id 5/);
});

test('InlinksBuilder gives the bytes INLINKS.write gives, group after group', () => {
  const groups: Link[][] = [
    [
      { url: 'http://a.example/', anchor: 'first  page', metadata: null },
      { url: 'http://b.example/ž', anchor: '日本語 😀', metadata: null },
    ],
    [],
    [{ url: 'http://c.example/', anchor: '', metadata: null }],
  ];
  const builder = new InlinksBuilder();
  for (const links of groups) {
    builder.clear();
    // Byte strings: the UTF-8 bytes one character each, as the export's sort lines hold them.
    for (const link of links) builder.add(Buffer.from(link.url).toString('latin1'), Buffer.from(link.anchor).toString('latin1'));
    assert.equal(builder.count, links.length);
    assert.ok(builder.view().equals(encodeWritable(INLINKS, links)), JSON.stringify(links));
    assert.deepEqual(decodeWritable(INLINKS, builder.view(), 'mem', 0), links);
  }
});
