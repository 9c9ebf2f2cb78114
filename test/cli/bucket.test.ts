import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import test, { type TestContext } from 'node:test';
import { BUCKET_TYPE, BucketObject, encodeBucket, type Bucket, type BucketType } from '../../common/bucket/bucket.js';
import { ALIGN, BucketWriter, bucketFilePath } from '../../common/bucket/file.js';
import { cliPath, scratchDir } from '../helpers/paths.js';

function sherlock(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'], ...env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A state directory with four buckets (oids 1–4), the third deleted. */
function state(t: TestContext): { dir: string; file: string; oids: number[] } {
  const dir = scratchDir(t);
  const file = bucketFilePath(dir);
  const writer = BucketWriter.open(file);
  try {
    const page = {
      header: new BucketObject().add('U', 'http://example.com/').add('D', '1700000000'),
      body: new BucketObject()
        .add('T', 'text/html')
        .addChild('R', new BucketObject().add('U', 'http://example.com/next').add('x', 'next page'))
        .add('X', Buffer.from([0x90, 0x48, 0x69, 0x0a])),
    };
    const put = (type: BucketType, bucket: Bucket) => writer.append(type, encodeBucket(type, bucket));
    const oids = [
      put(BUCKET_TYPE.V33_DEFLATE, page),
      put(BUCKET_TYPE.PLAIN, { header: new BucketObject(), body: new BucketObject().add('U', 'http://plain/') }),
      put(BUCKET_TYPE.V33, page),
      put(BUCKET_TYPE.V30, { header: new BucketObject(), body: new BucketObject().add('T', 'no url') }),
    ];
    writer.delete(oids[2]!);
    return { dir, file, oids };
  } finally {
    writer.close();
  }
}

test('bucket ls lists live buckets with oid, type, length and URL', (t) => {
  const { dir, oids } = state(t);
  const run = sherlock(['bucket', 'ls', '--state', dir]);
  assert.equal(run.status, 0, run.stderr);
  const lines = run.stdout.trimEnd().split('\n');
  assert.deepEqual(
    lines.map((line) => line.split(' ').filter((_, i) => i !== 2)),
    [
      [String(oids[0]), 'v3.3-deflate', 'http://example.com/'],
      [String(oids[1]), 'plain', 'http://plain/'],
      [String(oids[3]), 'v3.0', '-'],
    ],
  );
  const json = sherlock(['bucket', 'ls', '--state', dir, '--from', String(oids[1]), '--json']);
  assert.equal(json.status, 0, json.stderr);
  const rows = json.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { oid: number; url: string | null; length: number });
  assert.deepEqual(
    rows.map((row) => [row.oid, row.url]),
    [
      [oids[1], 'http://plain/'],
      [oids[3], null],
    ],
  );
  assert.equal(rows[0]!.length, 'Uhttp://plain/\n'.length);
});

test('bucket cat prints header, an empty line and the body, children bracketed and indented', (t) => {
  const { dir, oids } = state(t);
  const run = sherlock(['bucket', 'cat', '--state', dir, String(oids[0])]);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(
    run.stdout,
    [
      'U http://example.com/',
      'D 1700000000',
      '',
      'T text/html',
      '(R',
      '  U http://example.com/next',
      '  x next page',
      ')',
      'X \\x90Hi\\x0a',
      '',
    ].join('\n'),
  );
  const json = sherlock(['bucket', 'cat', '--state', dir, String(oids[0]), '--json']);
  assert.equal(json.status, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    oid: oids[0],
    type: 'v3.3-deflate',
    header: [
      { name: 'U', value: 'http://example.com/' },
      { name: 'D', value: '1700000000' },
    ],
    body: [
      { name: 'T', value: 'text/html' },
      { name: 'R', items: [{ name: 'U', value: 'http://example.com/next' }, { name: 'x', value: 'next page' }] },
      { name: 'X', base64: Buffer.from([0x90, 0x48, 0x69, 0x0a]).toString('base64') },
    ],
  });
});

test('bucket cat of a deleted or missing oid fails; a malformed oid is a usage error', (t) => {
  const { dir, oids } = state(t);
  const deleted = sherlock(['bucket', 'cat', '--state', dir, String(oids[2])]);
  assert.equal(deleted.status, 1);
  assert.match(deleted.stderr, /^sherlock: .*buckets: offset \d+: bucket \d+ is deleted\n$/);
  assert.equal(sherlock(['bucket', 'cat', '--state', dir, '99999']).status, 1);
  const bad = sherlock(['bucket', 'cat', '--state', dir, '12x']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /bad oid "12x"/);
});

test('--state defaults to $STATE_DIRECTORY; without either it is a usage error', (t) => {
  const { dir } = state(t);
  const fromEnv = sherlock(['bucket', 'ls'], { STATE_DIRECTORY: dir });
  assert.equal(fromEnv.status, 0, fromEnv.stderr);
  assert.equal(fromEnv.stdout.trimEnd().split('\n').length, 3);
  const none = sherlock(['bucket', 'ls']);
  assert.equal(none.status, 2);
  assert.match(none.stderr, /--state DIR or set STATE_DIRECTORY/);
  const missing = sherlock(['bucket', 'verify', '--state', scratchDir(t)]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /gather\/buckets: no such file/);
});

test('bucket verify passes a sound file and exits 1 naming the offset of a flipped bit', (t) => {
  const { dir, file, oids } = state(t);
  const ok = sherlock(['bucket', 'verify', '--state', dir]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout, `${file}: 3 buckets ok, 1 deleted, 0 problems\n`);

  const bytes = readFileSync(file);
  const offset = oids[1]! * ALIGN;
  bytes[offset + 20]! ^= 0x08;
  writeFileSync(file, bytes);
  const bad = sherlock(['bucket', 'verify', '--state', dir]);
  assert.equal(bad.status, 1);
  const first = bad.stdout.split('\n')[0]!;
  assert.ok(first.startsWith(`${file}: offset ${offset}: bucket ${oids[1]}: CRC-32 mismatch: `), first);
  assert.match(bad.stdout, /: 2 buckets ok, 1 deleted, 1 problems\n$/);
  const json = sherlock(['bucket', 'verify', '--state', dir, '--json']);
  assert.equal(json.status, 1);
  const report = JSON.parse(json.stdout) as { problems: Array<{ offset: number }> };
  assert.deepEqual(
    report.problems.map((p) => p.offset),
    [offset],
  );
  // ls still lists the others and reports the damage on stderr.
  const ls = sherlock(['bucket', 'ls', '--state', dir]);
  assert.equal(ls.status, 1);
  assert.equal(ls.stdout.trimEnd().split('\n').length, 2);
  assert.match(ls.stderr, new RegExp(`offset ${offset}: bucket ${oids[1]}: CRC-32 mismatch`));
});

test('bucket shake reports kept, removed and bytes saved; it refuses while a writer runs', (t) => {
  const { dir, file } = state(t);
  const writer = BucketWriter.open(file);
  const locked = sherlock(['bucket', 'shake', '--state', dir]);
  writer.close();
  assert.equal(locked.status, 1);
  assert.match(locked.stderr, /buckets\.lock: held by live process/);

  const run = sherlock(['bucket', 'shake', '--state', dir]);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^kept 3, removed 1, saved \d+ bytes, generation 1\n$/);
  assert.ok(Number(/saved (\d+)/.exec(run.stdout)![1]) > 0);
  const again = sherlock(['bucket', 'shake', '--state', dir, '--json']);
  assert.equal(again.status, 0, again.stderr);
  const { kept, removed, generation } = JSON.parse(again.stdout) as { kept: number; removed: number; generation: number };
  assert.deepEqual({ kept, removed, generation }, { kept: 3, removed: 0, generation: 1 });
  const ls = sherlock(['bucket', 'ls', '--state', dir]);
  assert.deepEqual(
    ls.stdout.trimEnd().split('\n').map((line) => line.split(' ')[0]),
    ['1', '2', '3'],
  );
});
