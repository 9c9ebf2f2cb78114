import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { gunzipSync } from 'node:zlib';
import { cdxUrlKey } from '../../../common/archive/cdx.js';
import { isSherlockError } from '../../../common/errors.js';
import { ZipNumCluster, ZipNumWriter } from '../../../common/archive/zipnum.js';
import { scratchDir, testdata } from '../../helpers/paths.js';

/** A sorted generated index: hosts with many captures each, so keys span blocks. */
function generatedLines(count: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const host = `com,site${(i * 7) % 53})`;
    const path = `/p${(i * 13) % 29}`;
    const ts = String(20200101000000 + i);
    lines.push(`${host}${path} ${ts} http://site/p text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 100 ${i * 100} crawl-00000.arc.gz`);
  }
  return lines.sort();
}

function linearScan(lines: string[], key: string, prefix = false): string[] {
  return lines.filter((line) => (prefix ? cdxUrlKey(line).startsWith(key) : cdxUrlKey(line) === key));
}

test('a generated cluster answers every lookup as a linear scan of the index does', (t) => {
  const dir = scratchDir(t);
  const lines = generatedLines(5000);
  const writer = new ZipNumWriter(dir, { blockLines: 37, shardSize: 20_000 });
  for (const line of lines) writer.add(line);
  const summary = writer.close();
  assert.equal(summary.lines, 5000);
  assert.equal(summary.blocks, Math.ceil(5000 / 37));
  assert.ok(summary.shards.length > 1, `${summary.shards.length} shards`);
  assert.deepEqual(readdirSync(dir).sort(), ['index.idx', 'index.loc', ...summary.shards.map((s) => `${s}.cdx.gz`)].sort());

  const cluster = ZipNumCluster.open(join(dir, 'index.idx'));
  t.after(() => cluster.close());
  const keys = [...new Set(lines.map(cdxUrlKey))];
  for (const key of [...keys, 'com,site1)/p', 'com,site0)/', 'a', 'zzz', 'com,site9)/p99']) {
    assert.deepEqual([...cluster.lookup(key)], linearScan(lines, key), key);
  }
  for (const prefix of ['com,site1', 'com,site52)/', 'com,', 'com,site3)/p1']) {
    assert.deepEqual([...cluster.lookup(prefix, { prefix: true })], linearScan(lines, prefix, true), prefix);
  }
  // Every block in order is the whole index.
  assert.deepEqual(cluster.blocks.flatMap((_, i) => cluster.blockLines(i)), lines);
});

test('the summary is searchable by hand: binary search on .idx, then one gzip member read at its offset', (t) => {
  const dir = scratchDir(t);
  const lines = generatedLines(3000);
  const writer = new ZipNumWriter(dir, { name: 'cluster', blockLines: 100 });
  for (const line of lines) writer.add(line);
  writer.close();
  const idx = readFileSync(join(dir, 'cluster.idx'), 'latin1').trim().split('\n').map((l) => l.split('\t'));
  assert.deepEqual(idx[0], [lines[0]!.split(' ').slice(0, 2).join(' '), 'cluster-00000', '0', idx[0]![3], '1']);
  assert.equal(readFileSync(join(dir, 'cluster.loc'), 'latin1'), 'cluster-00000\tcluster-00000.cdx.gz\n');
  const key = 'com,site17)/p20';
  let lo = 0;
  let hi = idx.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (idx[mid]![0]! < key) lo = mid + 1;
    else hi = mid;
  }
  const [, shard, offset, length] = idx[Math.max(0, lo - 1)]!;
  const bytes = readFileSync(join(dir, `${shard}.cdx.gz`)).subarray(Number(offset), Number(offset) + Number(length));
  const block = gunzipSync(bytes).toString('latin1').split('\n').filter((l) => l !== '');
  assert.equal(block.length, 100);
  const found = block.filter((l) => cdxUrlKey(l) === key);
  assert.ok(found.length > 0);
  assert.deepEqual(found, linearScan(lines, key).slice(0, found.length));
});

test('pywb’s sample cluster: the broken first location is skipped, lookups match a scan of all its blocks', (t) => {
  const cluster = ZipNumCluster.open(testdata('arc', 'pywb', 'zipnum-sample.idx'));
  t.after(() => cluster.close());
  assert.equal(cluster.blocks.length, 38);
  assert.deepEqual(cluster.blocks[0], { key: 'com,example)/ 20140127171200', shard: 'zipnum', offset: 0, length: 275, number: 1 });
  assert.deepEqual(cluster.blocks[37], { key: 'org,iana)/time-zones 20140126200737', shard: 'zipnum', offset: 9631, length: 166, number: 38 });
  const all = cluster.blocks.flatMap((_, i) => cluster.blockLines(i));
  assert.equal(all.length, 188);
  for (const key of ['com,example)/', 'com,example)/?example=1', 'org,iana)/', 'org,iana)/domains/root/servers', 'org,iana)/time-zones', 'org,iana)/nothing']) {
    assert.deepEqual([...cluster.lookup(key)], linearScan(all, key), key);
  }
  assert.deepEqual([...cluster.lookup('org,iana)/_css', { prefix: true })], linearScan(all, 'org,iana)/_css', true));
  assert.ok(linearScan(all, 'org,iana)/').length >= 2);
});

test('lines out of byte order are refused; a damaged summary names the file and offset', (t) => {
  const dir = scratchDir(t);
  const writer = new ZipNumWriter(dir);
  writer.add('b 1');
  assert.throws(() => writer.add('a 1'), RangeError);
  writer.close();
  const bad = join(dir, 'bad.idx');
  writeFileSync(bad, 'a 1\tindex-00000\t0\t10\t1\nb 2\tindex-00000\tx\t10\t2\n');
  writeFileSync(join(dir, 'bad.loc'), 'index-00000\tindex-00000.cdx.gz\n');
  assert.throws(() => ZipNumCluster.open(bad), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_INDEX') && err.place.file === bad && err.place.offset === 23);
});
