/**
 * The gatherer's store (gatherer/store.ts) and its crash contract: after a
 * kill -9 (a real child, test/helpers/gather-crash-child.ts) the ARC files
 * hold exactly the records the buckets point at, and every bucket whose queue
 * entry may not have been marked done is listed in `unfinished`; after a
 * clean close none is; a damaged checkpoint means scanning everything.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { BucketWriter, bucketFilePath } from '../../common/bucket/file.js';
import { arcAttribute, arcDir, parseArcAttribute } from '../../common/archive/arc-place.js';
import { GatherStore, parseQueueAttribute, queueAttribute, type QueueRef } from '../../gatherer/store.js';
import { crashInput } from '../helpers/gather-crash-child.js';
import { arcRecords, storedObjects } from '../helpers/gather-state.js';
import { repoRoot, scratchDir } from '../helpers/paths.js';

const crashChild = join(repoRoot, 'dist', 'test', 'helpers', 'gather-crash-child.js');

function openStore(state: string): Promise<GatherStore> {
  return GatherStore.open(state, { arcMaxSize: 100_000_000 });
}

function checkpointPath(state: string): string {
  return join(state, 'gather', 'checkpoint');
}

function killedStore(state: string, ...args: string[]): void {
  const child = spawnSync(process.execPath, [crashChild, ...args.slice(0, 1), state, ...args.slice(1)], { encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', `the store child was not killed (status ${child.status}): ${child.stderr}`);
}

/** The ARC files hold exactly the records the buckets point at, one for one, same URLs. */
function assertArcMatchesBuckets(state: string): void {
  const records = arcRecords(state);
  const pointed = storedObjects(state).filter((o) => o.arc !== undefined);
  assert.deepEqual(
    records.map((r) => `${r.file} ${r.offset} ${r.length} ${r.url}`),
    pointed.map((o) => `${o.arc!.file} ${o.arc!.offset} ${o.arc!.length} ${o.url}`),
    'ARC records and the buckets that point at them',
  );
  assert.ok(
    readdirSync(arcDir(state)).every((n) => !n.endsWith('.open')),
    'no ARC file left open',
  );
}

function refs(store: GatherStore): QueueRef[] {
  return store.unfinished.map(({ slot, seq, retry }) => (retry === true ? { slot, seq, retry } : { slot, seq }));
}

for (const [n, sync, arcMax] of [
  [0, undefined, undefined],
  [3, undefined, undefined],
  [3, 2, undefined],
  [3, undefined, 1],
  [3, 2, 1],
] as const) {
  const roll = arcMax === undefined ? '' : ', a new ARC file for every record';
  test(`an ARC record whose bucket was never appended is cut on reopen (${n} puts before${sync === undefined ? '' : `, sync after ${sync}`}${roll})`, async (t) => {
    const state = scratchDir(t);
    killedStore(state, 'store-arc', String(n), String(sync ?? 0), ...(arcMax === undefined ? [] : [String(arcMax)]));
    // What the kill left: one ARC record more than there are buckets, in the open file.
    assert.equal(arcRecords(state).length, n + 1);
    assert.equal(storedObjects(state).length, n);
    const openFiles = readdirSync(arcDir(state)).filter((f) => f.endsWith('.open'));
    assert.equal(openFiles.length, 1);

    const store = await openStore(state);
    try {
      // The open file held the orphan record after the others (all of them, or none when rolling each time).
      const kept = arcMax === undefined ? n : 0;
      assert.deepEqual(store.recoveredArcs.map((r) => ({ file: r.file, documents: r.documents, removed: r.removed })), [
        { file: openFiles[0], documents: kept, removed: kept === 0 },
      ]);
      assert.equal(readdirSync(arcDir(state)).length, arcMax === undefined ? Math.min(n, 1) : n);
      assertArcMatchesBuckets(state);
      assert.equal(arcRecords(state).length, n);
      assert.deepEqual(
        arcRecords(state).map((r) => r.url),
        Array.from({ length: n }, (_, i) => crashInput(i, { slot: 1, seq: i }).arc!.url),
      );
      // No checkpoint (or one after `sync` puts): the buckets after it are listed.
      const from = sync ?? 0;
      assert.deepEqual(refs(store), Array.from({ length: n - from }, (_, i) => ({ slot: 1, seq: from + i })));
      // The store goes on writing after the recovery.
      await store.put(crashInput(10, { slot: 1, seq: 10 }));
    } finally {
      await store.close(() => {});
    }
    assertArcMatchesBuckets(state);
    assert.equal(arcRecords(state).length, n + 1);
  });
}


/** Deletes one bucket and compacts the file, as `sherlock bucket shake` does with the gatherer stopped. */
function deleteAndShake(state: string, oid: number): void {
  const writer = BucketWriter.open(bucketFilePath(state));
  writer.delete(oid);
  writer.close();
  BucketWriter.shake(bucketFilePath(state));
}

test('a bucket appended whose `after` never ran is listed in unfinished with its slot and seq', async (t) => {
  const state = scratchDir(t);
  killedStore(state, 'store-after', '2');
  const store = await openStore(state);
  try {
    assert.deepEqual(refs(store), [
      { slot: 1, seq: 0 },
      { slot: 1, seq: 1 },
      { slot: 2, seq: 5, retry: true },
    ]);
    const last = store.unfinished.at(-1)!;
    const objects = storedObjects(state);
    assert.equal(last.oid, objects.at(-1)!.oid);
    assert.equal(last.header.string('U'), crashInput(2, { slot: 2, seq: 5 }).arc!.url);
  } finally {
    await store.close(() => {});
  }
  assertArcMatchesBuckets(state);
  assert.equal(arcRecords(state).length, 3, 'the last record has its bucket: kept');
});

test('after a sync, only the buckets appended since are listed in unfinished', async (t) => {
  const state = scratchDir(t);
  killedStore(state, 'store-after', '3', '3');
  const store = await openStore(state);
  try {
    assert.deepEqual(refs(store), [{ slot: 2, seq: 5, retry: true }]);
    assert.equal(store.unfinished[0]!.oid, storedObjects(state).at(-1)!.oid);
  } finally {
    await store.close(() => {});
  }
  assertArcMatchesBuckets(state);
});

test('after a clean sync and close, unfinished is empty and nothing is recovered', async (t) => {
  const state = scratchDir(t);
  let store = await openStore(state);
  const synced: string[] = [];
  for (let i = 0; i < 3; i++) await store.put(crashInput(i, { slot: 1, seq: i }));
  await store.sync(() => synced.push('sync'));
  for (let i = 3; i < 5; i++) await store.put(crashInput(i, { slot: 1, seq: i }), () => synced.push(`after ${i}`));
  await store.close(() => synced.push('close'));
  assert.deepEqual(synced, ['sync', 'after 3', 'after 4', 'close']);

  store = await openStore(state);
  try {
    assert.deepEqual(store.unfinished, []);
    assert.deepEqual(store.recoveredArcs, []);
  } finally {
    await store.close(() => {});
  }
  assertArcMatchesBuckets(state);
  assert.equal(storedObjects(state).length, 5);
  // Reopened and closed without a put: still nothing unfinished.
  store = await openStore(state);
  try {
    assert.deepEqual(store.unfinished, []);
  } finally {
    await store.close(() => {});
  }
});

test('objects without an ARC record or queue entry are stored and never listed', async (t) => {
  const state = scratchDir(t);
  let store = await openStore(state);
  const { header, body } = crashInput(0, { slot: 1, seq: 0 });
  const plain = await store.put({ header, body, deflate: false });
  assert.equal(plain.arc, undefined);
  const withArc = await store.put(crashInput(1, { slot: 3, seq: 4 }));
  assert.deepEqual(withArc.arc === undefined ? undefined : parseArcAttribute(arcAttribute(withArc.arc)), {
    file: withArc.arc!.file,
    offset: withArc.arc!.offset,
    length: withArc.arc!.length,
  });
  await store.close(() => {});
  // No checkpoint: every bucket is scanned, only the one with `q` is listed.
  writeFileSync(checkpointPath(state), 'x');
  store = await openStore(state);
  try {
    assert.deepEqual(refs(store), [{ slot: 3, seq: 4 }]);
    assert.equal(store.unfinished[0]!.oid, withArc.oid);
  } finally {
    await store.close(() => {});
  }
  const objects = storedObjects(state);
  assert.equal(objects[0]!.arc, undefined);
  assert.equal(objects[0]!.bucket.header.string('q'), undefined);
  assert.equal(objects[1]!.bucket.header.string('q'), '3 4');
});

test('a damaged checkpoint makes open check every bucket instead of failing', async (t) => {
  const state = scratchDir(t);
  const store = await openStore(state);
  for (let i = 0; i < 3; i++) await store.put(crashInput(i, { slot: 7, seq: i, ...(i === 1 ? { retry: true } : {}) }));
  await store.close(() => {});
  const all = [{ slot: 7, seq: 0 }, { slot: 7, seq: 1, retry: true }, { slot: 7, seq: 2 }];
  for (const junk of [
    '',
    'garbage',
    '\x00\x01\x02',
    '{"generation":0,"oid":',
    'null',
    '[]',
    '{}',
    '{"generation":0}',
    '{"generation":"0","oid":4}',
    '{"generation":0,"oid":-1}',
    '{"generation":0,"oid":1.5}',
    '{"generation":0,"oid":4,"arc":{"file":3,"size":10}}',
    '{"generation":0,"oid":4,"arc":{"file":"x","size":-10}}',
    '{"generation":0,"oid":4,"arc":5}',
  ]) {
    writeFileSync(checkpointPath(state), junk);
    const reopened = await openStore(state);
    try {
      assert.deepEqual(refs(reopened), all, `checkpoint ${JSON.stringify(junk)}`);
    } finally {
      await reopened.close(() => {});
    }
  }
  assertArcMatchesBuckets(state);
});

test(
  'a checkpoint whose arc field is null makes open check every bucket instead of failing',
  async (t) => {
    const state = scratchDir(t);
    const store = await openStore(state);
    await store.put(crashInput(0, { slot: 7, seq: 0 }));
    await store.close(() => {});
    writeFileSync(checkpointPath(state), '{"generation":0,"oid":4,"arc":null}');
    const reopened = await openStore(state);
    try {
      assert.deepEqual(refs(reopened), [{ slot: 7, seq: 0 }]);
    } finally {
      await reopened.close(() => {});
    }
  },
);

test('after a shake, open translates the checkpoint oid and lists the buckets after it', async (t) => {
  const state = scratchDir(t);
  const store = await openStore(state);
  const stored = [];
  for (let i = 0; i < 2; i++) stored.push(await store.put(crashInput(i, { slot: 1, seq: i })));
  await store.sync(() => {});
  const saved = join(state, 'checkpoint.saved');
  copyFileSync(checkpointPath(state), saved);
  for (let i = 2; i < 4; i++) stored.push(await store.put(crashInput(i, { slot: 1, seq: i })));
  await store.close(() => {});
  // As if the last two puts came after the last checkpoint (a crash instead of the close).
  copyFileSync(saved, checkpointPath(state));
  deleteAndShake(state, stored[0]!.oid);

  const reopened = await openStore(state);
  try {
    assert.deepEqual(refs(reopened), [
      { slot: 1, seq: 2 },
      { slot: 1, seq: 3 },
    ]);
    const live = storedObjects(state);
    assert.equal(live.length, 3);
    assert.deepEqual(
      reopened.unfinished.map((u) => u.oid),
      live.slice(1).map((o) => o.oid),
    );
  } finally {
    await reopened.close(() => {});
  }
});

test(
  'after a clean close and a shake, the store opens again',
  async (t) => {
    const state = scratchDir(t);
    const store = await openStore(state);
    const stored = [];
    for (let i = 0; i < 3; i++) stored.push(await store.put(crashInput(i, { slot: 1, seq: i })));
    await store.close(() => {});
    deleteAndShake(state, stored[0]!.oid);

    const reopened = await openStore(state);
    try {
      const live = new Set(storedObjects(state).map((o) => o.oid));
      for (const u of reopened.unfinished) assert.ok(live.has(u.oid), `unfinished names bucket ${u.oid}, which is not in the file`);
      await reopened.put(crashInput(3, { slot: 1, seq: 3 }));
    } finally {
      await reopened.close(() => {});
    }
    // The deleted bucket's record stays in its ARC file (archives are never rewritten); the new one has its bucket.
    const urls = storedObjects(state).map((o) => o.url);
    assert.equal(urls.length, 3);
  },
);

test('queue attributes: written forms parse back, junk is refused', () => {
  for (const ref of [{ slot: 0, seq: 0 }, { slot: 1, seq: 2 }, { slot: 4294967295, seq: 4294967295, retry: true }] as QueueRef[]) {
    assert.deepEqual(parseQueueAttribute(queueAttribute(ref)), ref);
  }
  assert.equal(queueAttribute({ slot: 3, seq: 4, retry: false }), '3 4');
  for (const junk of [undefined, '', '1', '1 ', ' 1 2', '1 2 ', '1  2', '1 2 3', '1 2 retry ', '1 2 retryx', '1 2 RETRY', '-1 2', '1 -2', 'a b', '1.5 2', '0x1 2', '12345678901 1', '1 12345678901', '1\t2', '1 2\n']) {
    assert.equal(parseQueueAttribute(junk), undefined, JSON.stringify(junk));
  }
});
