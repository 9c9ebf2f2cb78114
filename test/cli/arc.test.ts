import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { ArcWriter } from '../../common/archive/arc-write.js';
import { cliPath, scratchDir, testdata } from '../helpers/paths.js';

function sherlock(args: string[]) {
  const result = spawnSync(process.execPath, [cliPath, ...args], { env: { PATH: process.env['PATH'] }, maxBuffer: 64 * 1024 * 1024 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr.toString('utf8') };
}

const exampleGz = testdata('arc', 'pywb', 'example.arc.gz');
const badArc = testdata('arc', 'pywb', 'bad.arc');

test('arc ls lists every record with offset, length, date, MIME, status and URL, the version block included', () => {
  const run = sherlock(['arc', 'ls', exampleGz]);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(
    run.stdout.toString('utf8'),
    '0 171 20140216050221 text/plain - filedesc://live-web-example.arc.gz\n171 856 20140216050221 text/html 200 http://example.com/\n',
  );
});

test('arc ls --json prints one object per record, with the payload digest', () => {
  const run = sherlock(['arc', 'ls', '--json', exampleGz]);
  assert.equal(run.status, 0, run.stderr);
  const lines = run.stdout.toString('utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[1], {
    offset: 171,
    length: 856,
    url: 'http://example.com/',
    ip: '93.184.216.119',
    date: '20140216050221',
    mime: 'text/html',
    contentLength: 1591,
    status: 200,
    digest: 'B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A',
    version: 1,
  });
  assert.equal(lines[0]!['status'], null);
});

test('arc ls escapes hostile bytes and stops with exit 1 at damage, naming file and offset', () => {
  const formfeed = sherlock(['arc', 'ls', testdata('arc', 'cdx-writer', 'formfeed_in_url.arc.gz')]);
  assert.equal(formfeed.status, 0);
  const line = formfeed.stdout.toString('latin1').split('\n')[1]!;
  assert.match(line, /^159 445 20070519230830 text\/html 404 http:\/\/www\.megaclick\.com:80\/notf!%CA%9D.*%0C.*$/);
  assert.match(line, /^[\x20-\x7e]+$/);

  const path = testdata('arc', 'cdx-writer', 'negative_content_length.arc.gz');
  const negative = sherlock(['arc', 'ls', path]);
  assert.equal(negative.status, 1);
  assert.equal(negative.stdout.toString('utf8').split('\n').length, 3, 'the two records before the damage');
  assert.equal(negative.stderr, `sherlock: ${path}: offset 399: bad header line: negative length -2046788874\n`);
});

test('arc cat --offset 171 prints the HTTP response stored there, byte for byte', () => {
  const run = sherlock(['arc', 'cat', '--offset', '171', exampleGz]);
  assert.equal(run.status, 0, run.stderr);
  const plain = readFileSync(testdata('arc', 'pywb', 'example.arc'));
  assert.deepEqual(run.stdout, plain.subarray(151 + 65, 151 + 65 + 1591));
  assert.match(run.stdout.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/);
});

test('arc cat --header turns an ARC into its plain form; without --offset it prints every record', () => {
  const uncompressed = testdata('arc', 'cdx-writer', 'uncompressed.arc');
  const run = sherlock(['arc', 'cat', '--header', uncompressed]);
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(run.stdout, readFileSync(uncompressed), 'IA’s uncompressed.arc is exactly records with one LF after each');
  const all = sherlock(['arc', 'cat', exampleGz]);
  assert.equal(all.stdout.length, 75 + 1591);
});

test('arc cat at an offset where no record starts fails naming it; a bad offset is a usage error', () => {
  const wrong = sherlock(['arc', 'cat', '--offset', '172', exampleGz]);
  assert.equal(wrong.status, 1);
  assert.match(wrong.stderr, /^sherlock: .*example\.arc\.gz: offset 172: expected a gzip member/);
  const past = sherlock(['arc', 'cat', '--offset', '5000', exampleGz]);
  assert.equal(past.status, 1);
  assert.match(past.stderr, /offset 5000: no record at offset 5000/);
  const usage = sherlock(['arc', 'cat', '--offset', '-3', exampleGz]);
  assert.equal(usage.status, 2);
});

test('arc verify reports every problem of pywb bad.arc with its offset and exits 1', () => {
  const run = sherlock(['arc', 'verify', badArc]);
  assert.equal(run.status, 1, run.stderr);
  assert.equal(
    run.stdout.toString('utf8'),
    [
      `${badArc}: offset 0: bad header line: negative length -1`,
      `${badArc}: offset 134: bad header line: negative length -1`,
      `${badArc}: offset 262: bad header line: length "abc" is not a number`,
      `${badArc}: 3 problems, 1 complete record`,
      '',
    ].join('\n'),
  );
});

test('arc verify exits 0 on good files, plain and compressed, and --json gives objects', () => {
  for (const [path, records] of [
    [exampleGz, 2],
    [testdata('arc', 'webarchive-commons', 'IAH-20080430204825-00000-blackbook-truncated.arc'), 9],
  ] as const) {
    const run = sherlock(['arc', 'verify', path]);
    assert.equal(run.status, 0, run.stdout.toString());
    assert.equal(run.stdout.toString('utf8'), `${path}: ok, ${records} complete records\n`);
  }
  const json = sherlock(['arc', 'verify', '--json', testdata('arc', 'cdx-writer', 'negative_content_length.arc.gz')]);
  assert.equal(json.status, 1);
  const lines = json.stdout.toString('utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(lines.map((l) => [l['offset'], l['code'], l['records'], l['ok']]), [
    [399, 'SHERLOCK_CORRUPT_ARC', undefined, undefined],
    [undefined, undefined, 3, false],
  ]);
});

test('arc verify on a missing file fails with the file named', () => {
  const run = sherlock(['arc', 'verify', '/nonexistent/x.arc.gz']);
  assert.equal(run.status, 1);
  assert.equal(run.stderr, 'sherlock: /nonexistent/x.arc.gz: open failed: ENOENT\n');
});

test('a reader that goes away early (`| head`) ends arc ls and arc cat quietly', async (t) => {
  const dir = scratchDir(t);
  const writer = await ArcWriter.open({ dir, prefix: 'many', compress: false });
  const content = Buffer.from('HTTP/1.1 200 OK\r\n\r\n' + 'x'.repeat(200));
  let file = '';
  for (let i = 0; i < 5000; i++) ({ file } = await writer.write({ url: `http://example.com/${i}`, ip: '192.0.2.1', date: new Date(), content }));
  await writer.close();
  for (const command of ['ls', 'cat']) {
    const child = spawn(process.execPath, [cliPath, 'arc', command, join(dir, file)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(stderr, '', command);
    assert.equal(code, 0, command);
  }
});

const exampleWarc = testdata('arc', 'pywb', 'example.warc.gz');

test('arc ls, cat and verify read WARC files too: WARC-Date, WARC-Type, status and target URI; the block; --header gives a plain WARC', (t) => {
  const ls = sherlock(['arc', 'ls', testdata('arc', 'wget-warc', 'wget-sample.warc.gz')]);
  assert.equal(ls.status, 0, ls.stderr);
  const lines = ls.stdout.toString('utf8').trimEnd().split('\n');
  assert.equal(lines.length, 9);
  assert.equal(lines[0], '0 434 2026-11-22T09:08:18Z warcinfo - -');
  assert.equal(lines[2], '829 545 2026-11-22T09:08:18Z response 200 http://127.0.0.1:18931/');
  assert.equal(lines[4], '1780 656 2026-11-22T09:08:18Z response 404 http://127.0.0.1:18931/robots.txt');
  const json = sherlock(['arc', 'ls', '--json', exampleWarc]);
  const revisit = JSON.parse(json.stdout.toString('utf8').split('\n')[3]!) as Record<string, unknown>;
  assert.deepEqual([revisit['offset'], revisit['length'], revisit['type'], revisit['url']], [1864, 553, 'revisit', 'http://example.com?example=1']);

  const cat = sherlock(['arc', 'cat', '--offset', '333', exampleWarc]);
  assert.equal(cat.status, 0, cat.stderr);
  assert.match(cat.stdout.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[^]*<\/html>\n?$/);
  const plain = join(scratchDir(t), 'example.warc');
  writeFileSync(plain, sherlock(['arc', 'cat', '--header', exampleWarc]).stdout);
  const again = sherlock(['arc', 'ls', plain]);
  assert.equal(again.status, 0, again.stderr);
  assert.deepEqual(again.stdout.toString('utf8').trimEnd().split('\n').map((l) => l.split(' ').slice(2).join(' ')), sherlock(['arc', 'ls', exampleWarc]).stdout.toString('utf8').trimEnd().split('\n').map((l) => l.split(' ').slice(2).join(' ')));

  assert.equal(sherlock(['arc', 'verify', exampleWarc]).stdout.toString('utf8'), `${exampleWarc}: ok, 6 complete records\n`);
});

test('arc verify and arc ls on a damaged WARC name the file and offset, never crash', (t) => {
  const cut = join(scratchDir(t), 'cut.warc.gz');
  writeFileSync(cut, readFileSync(exampleWarc).subarray(0, 2000));
  const verify = sherlock(['arc', 'verify', cut]);
  assert.equal(verify.status, 1);
  assert.match(verify.stdout.toString('utf8'), new RegExp(`^${cut.replace(/[.]/g, '\\.')}: offset 1864: truncated gzip member: the file ends 136 bytes after its start\n${cut.replace(/[.]/g, '\\.')}: 1 problem, 3 complete records\n$`));
  const ls = sherlock(['arc', 'ls', cut]);
  assert.equal(ls.status, 1);
  assert.equal(ls.stdout.toString('utf8').trimEnd().split('\n').length, 3);
  assert.equal(ls.stderr, `sherlock: ${cut}: offset 1864: truncated gzip member: the file ends 136 bytes after its start\n`);
});
