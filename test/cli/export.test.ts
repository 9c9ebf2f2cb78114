import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { promisify } from 'node:util';
import { readArc } from '../../common/archive/arc-read.js';
import { CDX_LEGEND, cdxFields, cdxUrlKey, formatCdx, parseCdxLine, type CdxFields } from '../../common/archive/cdx.js';
import { ArcWriter } from '../../common/archive/arc-write.js';
import { ZipNumCluster } from '../../common/archive/zipnum.js';
import { runCli } from '../helpers/cli.js';
import { scratchDir, testdata } from '../helpers/paths.js';
import { warcioBin, writeSampleArc } from '../helpers/sample-arc.js';

const execFileAsync = promisify(execFile);

/** A state directory whose gather/arc holds the sample crawl in several files, plus a file still being written. */
async function sampleState(dir: string): Promise<{ state: string; arcs: string[] }> {
  const state = join(dir, 'state');
  const arcDir = join(state, 'gather', 'arc');
  const names = await writeSampleArc(arcDir, { maxFileSize: 600 });
  assert.ok(names.length > 1);
  copyFileSync(join(arcDir, names[0]!), join(arcDir, 'crawl-20240301095959-00099.arc.gz.open'));
  return { state, arcs: names.sort().map((n) => join(arcDir, n)) };
}

function ourLines(paths: string[]): string[] {
  return paths.flatMap((path) => [...readArc(path)].flatMap((r) => {
    const f = cdxFields(r, path.slice(path.lastIndexOf('/') + 1));
    return f === undefined ? [] : [formatCdx(f)];
  }));
}

/** `LC_ALL=C sort`, the order the issue asks for. */
async function cSort(lines: string[], dir: string): Promise<string[]> {
  const file = join(dir, 'unsorted');
  writeFileSync(file, lines.join('\n') + '\n', 'latin1');
  const { stdout } = await execFileAsync('sort', [file], { env: { LC_ALL: 'C' }, encoding: 'latin1' });
  return stdout.split('\n').filter((l) => l !== '');
}

test('export cdx --state indexes the finished ARC files of the crawl, skips .open, and sorts as LC_ALL=C sort', async (t) => {
  const dir = scratchDir(t);
  const { state, arcs } = await sampleState(dir);
  const out = join(dir, 'index.cdx');
  const r = await runCli(['export', 'cdx', '--state', state, '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const lines = readFileSync(out, 'latin1').split('\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines[0], CDX_LEGEND);
  assert.equal(lines.length, 7);
  assert.deepEqual(lines.slice(1), await cSort(ourLines(arcs), dir));
  assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.tmp')), []);
  const keys = lines.slice(1).map(cdxUrlKey);
  assert.deepEqual(keys, ['1,0,0,127:8080)/x?a=1&b=2', 'com,example)/', 'com,example)/a%20b?a=1&q=%c3%a9', 'com,example)/img.png', 'com,example)/missing', 'com,example)/old']);
  assert.equal(parseCdxLine(lines.find((l) => l.startsWith('com,example)/ '))!)!.robots, 'A');
});

test('export cdx --arc over many testdata files: one legend, every line, byte order, stdout as --out -', async (t) => {
  const dir = scratchDir(t);
  const files = ['pywb/example.arc', 'pywb/example.arc.gz', 'ukwa/IAH-20080430204825-00000-blackbook-truncated.arc.gz', 'cdx-writer/uncompressed.arc', 'cdx-writer/non_ascii_url.arc.gz', 'cdx-writer/chardet_failure_url.arc.gz', 'cdx-writer/formfeed_in_url.arc.gz', 'cdx-writer/bad_url_with_colon_1.arc.gz'].map((f) => testdata('arc', ...f.split('/')));
  const r = await runCli(['export', 'cdx', '--arc', ...files, '--out', '-', '--sort-memory', '2KiB']);
  assert.equal(r.status, 0, r.stderr);
  // runCli decodes stdout as UTF-8; compare through a file to keep raw bytes.
  const out = join(dir, 'all.cdx');
  assert.equal((await runCli(['export', 'cdx', '--arc', ...files, '--out', out])).status, 0);
  const lines = readFileSync(out, 'latin1').split('\n').filter((l) => l !== '');
  assert.equal(lines[0], CDX_LEGEND);
  assert.deepEqual(lines.slice(1), await cSort(ourLines(files), dir));
  assert.equal(r.stdout.split('\n').filter((l) => l !== '').length, lines.length);
});

test('export cdx --format cdxj --zipnum: a cluster whose lookups equal the plain index', async (t) => {
  const dir = scratchDir(t);
  const { state } = await sampleState(dir);
  const out = join(dir, 'index.cdxj');
  const zip = join(dir, 'zipnum');
  const r = await runCli(['export', 'cdx', '--state', state, '--out', out, '--format', 'cdxj', '--zipnum', zip, '--block-lines', '2']);
  assert.equal(r.status, 0, r.stderr);
  const lines = readFileSync(out, 'latin1').split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 6);
  assert.match(lines[1]!, /^com,example\)\/ 20240301100000 \{"url": "http:\/\/example.com\/", "mime": "text\/html", "status": "200", "digest": "sha1:[A-Z2-7]{32}", "robotflags": "A", "length": "\d+", "offset": "\d+", "filename": "crawl-20240301095959-0000\d.arc.gz"\}$/);
  const cluster = ZipNumCluster.open(join(zip, 'index.idx'));
  t.after(() => cluster.close());
  assert.equal(cluster.blocks.length, 3);
  for (const line of lines) assert.deepEqual([...cluster.lookup(cdxUrlKey(line))], [line]);
});

test('export warc: warcio indexes our WARC files with the URLs, digests and statuses of our CDX of the ARC files', async (t) => {
  const dir = scratchDir(t);
  const { state, arcs } = await sampleState(dir);
  const out = join(dir, 'warc');
  mkdirSync(out);
  const r = await runCli(['export', 'warc', '--state', state, '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const warcs = readdirSync(out).sort();
  assert.deepEqual(warcs, arcs.map((a) => a.slice(a.lastIndexOf('/') + 1).replace(/\.arc\.gz$/, '.warc.gz')));
  const { stdout } = await execFileAsync(process.execPath, [warcioBin, 'cdx-index', '--format', 'cdx', ...warcs.map((w) => join(out, w))]);
  const triple = (line: string): string => {
    const f = parseCdxLine(line)!;
    return `${f.original} ${f.digest} ${f.status}`;
  };
  const theirs = stdout.split('\n').filter((l) => l !== '').map(triple).sort();
  assert.deepEqual(theirs, ourLines(arcs).map(triple).sort());
  // A re-export writes the same bytes (record ids are name-based).
  const again = join(dir, 'again');
  mkdirSync(again);
  assert.equal((await runCli(['export', 'warc', '--state', state, '--out', again])).status, 0);
  for (const w of warcs) assert.deepEqual(readFileSync(join(again, w)), readFileSync(join(out, w)));
});

test('damage: strictly exit 1 naming file and offset and no output file; --lenient exports the rest and still exits 1', async (t) => {
  const dir = scratchDir(t);
  const arc = testdata('arc', 'cdx-writer', 'negative_content_length.arc.gz');
  const out = join(dir, 'index.cdx');
  const strict = await runCli(['export', 'cdx', '--arc', arc, '--out', out]);
  assert.equal(strict.status, 1);
  assert.match(strict.stderr, /negative_content_length\.arc\.gz: offset 399: .*negative length/);
  assert.deepEqual(readdirSync(dir), []);
  const lenient = await runCli(['export', 'cdx', '--lenient', '--arc', arc, '--out', out]);
  assert.equal(lenient.status, 1);
  assert.match(lenient.stderr, /offset 399/);
  assert.equal(readFileSync(out, 'latin1').split('\n').filter((l) => l !== '').length, 3);
});

test('several files (a worker thread each): damage in one still names its file and offset, strictly and leniently', async (t) => {
  const dir = scratchDir(t);
  const { arcs } = await sampleState(dir);
  const broken = testdata('arc', 'cdx-writer', 'negative_content_length.arc.gz');
  const out = join(dir, 'index.cdx');
  const strict = await runCli(['export', 'cdx', '--arc', ...arcs, broken, '--out', out]);
  assert.equal(strict.status, 1);
  assert.match(strict.stderr, /negative_content_length\.arc\.gz: offset 399: .*negative length/);
  assert.equal(readdirSync(dir).includes('index.cdx'), false);
  const lenient = await runCli(['export', 'cdx', '--lenient', '--arc', ...arcs, broken, '--out', out]);
  assert.equal(lenient.status, 1);
  assert.equal(lenient.stderr.match(/negative_content_length\.arc\.gz: offset 399/g)?.length, 1);
  const lines = readFileSync(out, 'latin1').split('\n').filter((l) => l !== '' && !l.startsWith(' CDX'));
  assert.equal(lines.length, ourLines(arcs).length + 2);
});

test('usage: --state and --arc together, or neither --out nor --zipnum, or a WARC to export warc, exit 2', async (t) => {
  const warc = await runCli(['export', 'warc', '--arc', testdata('arc', 'pywb', 'example.warc.gz'), '--out', scratchDir(t)]);
  assert.equal(warc.status, 2);
  assert.match(warc.stderr, /example\.warc\.gz: a WARC file: export warc converts ARC files/);
  assert.equal((await runCli(['export', 'cdx', '--state', '/x', '--arc', '/y', '--out', '-'])).status, 2);
  assert.equal((await runCli(['export', 'cdx', '--arc', '/y'])).status, 2);
  assert.equal((await runCli(['export', 'cdx', '--arc', '/y', '--out', '-', '--format', 'json'])).status, 2);
});

/** Whether 14 digits name a real instant (2015-12-00 does not: Date rolls it over to 11-30). */
function isInstant(b: string): boolean {
  const iso = `${b.slice(0, 4)}-${b.slice(4, 6)}-${b.slice(6, 8)}T${b.slice(8, 10)}:${b.slice(10, 12)}:${b.slice(12, 14)}.000Z`;
  return /^\d{14}$/.test(b) && !Number.isNaN(Date.parse(iso)) && new Date(iso).toISOString() === iso;
}

test('export warc and export cdx of odd ARC files agree: warcio finds in our WARC the instant, URL and digest of each CDX line, every date real', async (t) => {
  const dir = scratchDir(t);
  const names = ['15_digit_date', '10_digit_date', '14_digit_plus_text_date', '18_digit_date', 'hex_instead_of_date', 'carriage_return_in_url', 'transposed_header', 'arc_v1_with_v2_header'];
  const arcs = names.map((n) => testdata('arc', 'cdx-writer', `${n}.arc.gz`));
  const out = join(dir, 'warc');
  mkdirSync(out);
  const warc = await runCli(['export', 'warc', '--arc', ...arcs, '--out', out]);
  assert.equal(warc.status, 0, warc.stderr);
  const index = join(dir, 'index.cdx');
  const cdx = await runCli(['export', 'cdx', '--arc', ...arcs, '--out', index]);
  assert.equal(cdx.status, 0, cdx.stderr);
  const ours = readFileSync(index, 'latin1').split('\n').filter((l) => l !== '' && l !== CDX_LEGEND).map((l) => parseCdxLine(l)!);
  const { stdout } = await execFileAsync(process.execPath, [warcioBin, 'cdx-index', '--format', 'cdx', ...names.map((n) => join(out, `${n}.warc.gz`))], { maxBuffer: 1 << 26 });
  // warcio copies a MIME type with a space (`text/html, text/html`) into its line: take its fields by position from both ends.
  const theirs = stdout.split('\n').filter((l) => l !== '').map((l) => l.split(' ')).map((t) => ({ original: t[2]!, timestamp: t[1]!, digest: t.at(-6)! }));
  const view = (f: Pick<CdxFields, 'original' | 'timestamp' | 'digest'>): string => `${f.original} ${f.timestamp} ${f.digest}`;
  assert.deepEqual(theirs.map(view).sort(), ours.map(view).sort());
  for (const f of [...ours, ...theirs]) assert.ok(isInstant(f.timestamp), `${f.original}: ${f.timestamp} is no instant`);
  const by = (url: string): CdxFields => ours.find((f) => f.original === url)!;
  assert.equal(by('http://twitter.com/unesco_fr.xml').timestamp, '20151201000000');
  assert.equal(by('https://www.facebook.com/Vanishing-Ireland-110498185666457/').timestamp, '20160209000000');
  // No date of its own: the version block's, in both views.
  assert.equal(by('http://www.cbt.ki.se:80/wwwCNT/Staff/bergman.jan/').timestamp, '19700101000000');
  assert.ok(ours.some((f) => f.original === 'http://cheapchicks.org/cgi-bin/count/slcnt.cgi?c=3'));
});

test('export cdx --arc reads WARC files too: pywb’s example.warc.gz and Wget’s WARC give pywb’s index byte for byte', async (t) => {
  const dir = scratchDir(t);
  for (const [folder, name] of [['pywb', 'example.warc.gz'], ['wget-warc', 'wget-sample.warc.gz']] as const) {
    const out = join(dir, `${name}.cdx`);
    const r = await runCli(['export', 'cdx', '--arc', testdata('arc', folder, name), '--out', out]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(out, 'latin1'), readFileSync(testdata('arc', folder, 'expected', `${name}.pywb-cdx-indexer.cdx`), 'latin1'), name);
  }
  // CDXJ: cdxj-indexer's lines for Wget's WARC.
  const cdxj = join(dir, 'wget.cdxj');
  assert.equal((await runCli(['export', 'cdx', '--format', 'cdxj', '--arc', testdata('arc', 'wget-warc', 'wget-sample.warc.gz'), '--out', cdxj])).status, 0);
  assert.equal(readFileSync(cdxj, 'latin1'), readFileSync(testdata('arc', 'wget-warc', 'expected', 'wget-sample.warc.gz.cdxj-indexer.cdxj'), 'latin1'));
  // ARC and WARC files in one index.
  const mixed = join(dir, 'mixed.cdx');
  const r = await runCli(['export', 'cdx', '--arc', testdata('arc', 'pywb', 'example.arc.gz'), testdata('arc', 'pywb', 'example.warc.gz'), testdata('arc', 'wget-warc', 'wget-sample.warc.gz'), '--out', mixed]);
  assert.equal(r.status, 0, r.stderr);
  const lines = readFileSync(mixed, 'latin1').split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1 + 1 + 3 + 5);
  assert.deepEqual(lines.slice(1), await cSort(lines.slice(1), dir));
});

test('export cdx of a damaged WARC: strictly exit 1 naming file and offset, no output; --lenient indexes the rest', async (t) => {
  const dir = scratchDir(t);
  const bytes = readFileSync(testdata('arc', 'pywb', 'example.warc.gz'));
  // Cut inside the revisit's member (1864 + 553): the records before it are whole.
  const cut = join(dir, 'cut.warc.gz');
  writeFileSync(cut, bytes.subarray(0, 2000));
  const out = join(dir, 'index.cdx');
  const strict = await runCli(['export', 'cdx', '--arc', cut, '--out', out]);
  assert.equal(strict.status, 1);
  assert.match(strict.stderr, /cut\.warc\.gz: offset 1864: .*truncated gzip member/);
  assert.equal(readdirSync(dir).includes('index.cdx'), false);
  const lenient = await runCli(['export', 'cdx', '--lenient', '--arc', cut, '--out', out]);
  assert.equal(lenient.status, 1);
  assert.equal(readFileSync(out, 'latin1').split('\n').filter((l) => l !== '').length, 2);
});

test('export cdx leaves 304 Not Modified captures out, as IA’s CDX-Writer does; --include-304 keeps them', async (t) => {
  const dir = scratchDir(t);
  const arcDir = join(dir, 'arc');
  const writer = await ArcWriter.open({ dir: arcDir, prefix: 'crawl', clock: () => new Date('2024-03-01T09:59:59Z') });
  const page = 'http://example.com/same';
  const response = (status: string, body: string): Buffer => Buffer.from(`HTTP/1.1 ${status}\r\nETag: "1"\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  await writer.write({ url: page, ip: '93.184.216.34', date: new Date('2024-03-01T10:00:00Z'), contentType: 'text/html', content: response('200 OK', '<p>same</p>') });
  await writer.write({ url: page, ip: '93.184.216.34', date: new Date('2024-04-01T10:00:00Z'), content: response('304 Not Modified', '') });
  const { file } = await writer.write({ url: 'http://example.com/other', ip: '93.184.216.34', date: new Date('2024-04-01T10:00:01Z'), content: response('200 OK', 'x') });
  await writer.close();
  const arc = join(arcDir, file);
  const lines = async (...flags: string[]): Promise<string[]> => {
    const r = await runCli(['export', 'cdx', '--arc', arc, '--out', '-', ...flags]);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.split('\n').filter((l) => l !== '' && l !== CDX_LEGEND).map((l) => l.split(' ').slice(0, 5).join(' '));
  };
  assert.deepEqual(await lines(), ['com,example)/other 20240401100001 http://example.com/other unk 200', 'com,example)/same 20240301100000 http://example.com/same text/html 200']);
  assert.deepEqual((await lines('--include-304')).filter((l) => l.endsWith(' 304')), ['com,example)/same 20240401100000 http://example.com/same unk 304']);
});
