import assert from 'node:assert/strict';
import test from 'node:test';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { SherlockError } from '../../../common/errors.js';
import { contentCodings, decodeContent } from '../../../common/archive/content-decoding.js';

const MiB = 1024 * 1024;
const page = Buffer.from('<!doctype html><title>Příliš žluťoučký kůň</title>'.repeat(200));

async function expectCorrupt(run: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(run, (err: unknown) => {
    assert.ok(err instanceof SherlockError, String(err));
    assert.equal(err.code, 'SHERLOCK_CORRUPT_GZIP');
    assert.equal(err.place.url, 'http://example.com/');
    assert.match(err.message, message);
    return true;
  });
}

test('no coding and identity give the body back, cut at the cap', async () => {
  assert.deepEqual(await decodeContent(page, undefined, MiB), { data: page, truncated: false });
  assert.deepEqual(await decodeContent(page, ' identity ', MiB), { data: page, truncated: false });
  assert.deepEqual(await decodeContent(page, '', MiB), { data: page, truncated: false });
  const cut = await decodeContent(page, 'identity', 100);
  assert.equal(cut.truncated, true);
  assert.deepEqual(cut.data, page.subarray(0, 100));
});

test('gzip and x-gzip, in any case, are inflated', async () => {
  for (const name of ['gzip', 'x-gzip', 'GZip']) {
    assert.deepEqual(await decodeContent(gzipSync(page), name, MiB), { data: page, truncated: false }, name);
  }
});

test('deflate is inflated with its zlib header, and without one (raw deflate) too', async () => {
  assert.deepEqual(await decodeContent(deflateSync(page), 'deflate', MiB), { data: page, truncated: false });
  assert.deepEqual(await decodeContent(deflateRawSync(page), 'deflate', MiB), { data: page, truncated: false });
});

test('br is decompressed', async () => {
  assert.deepEqual(await decodeContent(brotliCompressSync(page), 'br', MiB), { data: page, truncated: false });
});

test('stacked codings are undone last first', async () => {
  const body = brotliCompressSync(gzipSync(page));
  assert.deepEqual(await decodeContent(body, 'gzip, br', MiB), { data: page, truncated: false });
  const three = gzipSync(deflateRawSync(brotliCompressSync(page)));
  assert.deepEqual(await decodeContent(three, 'br,deflate , identity, x-gzip', MiB), { data: page, truncated: false });
  assert.deepEqual(contentCodings('gzip, identity, br'), ['gzip', 'br']);
});

test('a body cut short decodes as far as it goes and is marked truncated', async () => {
  const gz = gzipSync(page);
  const cut = await decodeContent(gz.subarray(0, gz.length >> 1), 'gzip', MiB);
  assert.equal(cut.truncated, true);
  assert.ok(cut.data.length > 0);
  assert.deepEqual(cut.data, page.subarray(0, cut.data.length));
});

test('junk after a complete gzip member is ignored; several members are one stream', async () => {
  const junk = Buffer.concat([gzipSync(page), Buffer.from('\r\n<junk>')]);
  assert.deepEqual(await decodeContent(junk, 'gzip', MiB), { data: page, truncated: false });
  const members = Buffer.concat([gzipSync(page), gzipSync(page), Buffer.alloc(16)]);
  assert.deepEqual(await decodeContent(members, 'gzip', MiB), { data: Buffer.concat([page, page]), truncated: false });
  assert.deepEqual(await decodeContent(Buffer.alloc(0), 'gzip', MiB), { data: Buffer.alloc(0), truncated: false });
});

test('data that does not decode and unknown codings are SHERLOCK_CORRUPT_GZIP errors with the URL', async () => {
  const url = 'http://example.com/';
  await expectCorrupt(decodeContent(Buffer.from('plain text, not gzip'), 'gzip', MiB, url), /gzip content does not decode at byte 0: not a gzip member/);
  await expectCorrupt(decodeContent(Buffer.from('not brotli at all, no way'), 'br', MiB, url), /br content does not decode/);
  const damaged = gzipSync(page);
  damaged[10] = 0x07; // the first deflate block header: BFINAL 1, BTYPE 11 (reserved)
  await expectCorrupt(decodeContent(damaged, 'gzip', MiB, url), /gzip content does not decode: invalid block type/);
  await expectCorrupt(decodeContent(page, 'compress', MiB, url), /unsupported content coding "compress"/);
  await expectCorrupt(decodeContent(page, 'gzip, zstd', MiB, url), /unsupported content coding "zstd"/);
  await expectCorrupt(decodeContent(page, 'constructor', MiB, url), /unsupported content coding "constructor"/);
});

test('a gzip bomb stops at the cap without allocating what it would inflate to', async () => {
  // 40 members of 10 MB of zeros: 400 MB from about 400 KB.
  const member = gzipSync(Buffer.alloc(10_000_000));
  const bomb = Buffer.concat(Array.from({ length: 40 }, () => member));
  assert.ok(bomb.length < 500_000);
  for (const [coding, body] of [
    ['gzip', bomb],
    ['gzip, br', brotliCompressSync(bomb)],
  ] as const) {
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    }, 1);
    const started = Date.now();
    const result = await decodeContent(body, coding, MiB);
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    assert.equal(result.truncated, true, coding);
    assert.equal(result.data.length, MiB);
    assert.ok(result.data.every((byte) => byte === 0));
    assert.ok(peak - before < 8 * MiB, `${coding}: ${((peak - before) / MiB).toFixed(1)} MiB allocated`);
    assert.ok(Date.now() - started < 2000, `${coding}: inflating went on past the cap`);
  }
});
