import assert from 'node:assert/strict';
import { closeSync, openSync, readSync, statSync, truncateSync } from 'node:fs';
import test, { type TestContext } from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { isSherlockError } from '../../../common/errors.js';
import { HOST_RECORD_SIZE } from '../../../common/gather/host-file.js';
import { GatherQueue, MAX_REST_LENGTH, PAGE_SIZE, gatherPaths, type Host, type QueueEntry } from '../../../common/gather/queue-file.js';
import { patch } from '../../helpers/damage.js';
import { scratchDir } from '../../helpers/paths.js';
import { withQueue } from '../../helpers/queue-entries.js';

function throwsCorrupt(run: () => unknown, file: string, offset: number, message?: RegExp): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(isSherlockError(err, 'SHERLOCK_CORRUPT_QUEUE'), `expected ${'SHERLOCK_CORRUPT_QUEUE'}, got ${String(err)}`);
    assert.equal(err.place.file, file);
    assert.equal(err.place.offset, offset, err.message);
    if (message !== undefined) assert.match(err.message, message);
    return true;
  });
}

function readBytes(file: string, offset: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, out, 0, length, offset);
  } finally {
    closeSync(fd);
  }
  return out;
}

/** Rewrites header fields of the queue file (byte offset → u32) with a fresh CRC, as a bug or bad disk might. */
function patchHeader(file: string, fields: Record<number, number>): void {
  const head = readBytes(file, 0, 52);
  for (const [at, value] of Object.entries(fields)) head.writeUInt32LE(value, Number(at));
  head.writeUInt32LE(crc32(head.subarray(0, 48)), 48);
  patch(file, 0, head);
}

/** Rewrites the next link of a page with a fresh CRC. */
function patchNext(file: string, page: number, next: number): void {
  const data = readBytes(file, page * PAGE_SIZE, PAGE_SIZE);
  const used = data.readUInt32LE(8);
  data.writeUInt32LE(next, 0);
  data.writeUInt32LE(crc32(data.subarray(16, used), crc32(data.subarray(0, 12))), 12);
  patch(file, page * PAGE_SIZE, data.subarray(0, 16));
}

const rest = (i: number, length = 40): string => `/${i}/`.padEnd(length, 'x');

test('entries come back first in, first out, with priorities and seqs, also after reopening', (t) => {
  const state = scratchDir(t);
  withQueue(state, (queue) => {
    const host = queue.host('https', 443, 'example.com');
    for (let i = 0; i < 200; i++) assert.equal(queue.push(host, rest(i, 10 + (i % 7) * 50), i * 3), i);
    assert.equal(queue.length(host), 200);
  });
  withQueue(state, (queue) => {
    const host = queue.find('https', 443, 'example.com')!;
    assert.equal(host.queued, 200);
    const entries = [...queue.entries(host)];
    assert.deepEqual(entries.map((e) => e.seq), Array.from({ length: 200 }, (_, i) => i));
    entries.forEach((entry, i) => assert.deepEqual(entry, { rest: rest(i, 10 + (i % 7) * 50), priority: i * 3, seq: i }));
    assert.deepEqual(queue.verify().problems, []);
  });
});

test('take leaves the head in place until done, which takes only the head seq', (t) => {
  withQueue(scratchDir(t), (queue) => {
    const host = queue.host('http', 80, 'a.test');
    assert.equal(queue.take(host), undefined);
    queue.push(host, '/one', 7);
    queue.push(host, '/two', 9);
    const head = queue.take(host)!;
    assert.deepEqual(head, { rest: '/one', priority: 7, seq: 0 });
    assert.deepEqual(queue.take(host), head, 'take does not consume');
    assert.equal(queue.get(host).priority, 7, 'head priority');
    assert.throws(() => queue.done(host, 1), /head of a\.test is entry 0/);
    queue.done(host, head.seq);
    assert.equal(queue.get(host).priority, 9);
    assert.deepEqual(queue.take(host), { rest: '/two', priority: 9, seq: 1 });
    queue.done(host, 1);
    assert.equal(queue.take(host), undefined);
    assert.throws(() => queue.done(host, 2), /empty/);
    const after = queue.get(host);
    assert.deepEqual([after.queued, after.pushed, after.consumed, after.priority], [0, 2, 2, 0]);
    assert.equal(queue.verify().freePages, 1, 'the emptied queue gave its page back');
  });
});

test('host fields set by update() survive reopening; queue fields cannot be set', (t) => {
  const state = scratchDir(t);
  const key = Buffer.from('20010db8000000000000000000000001', 'hex');
  withQueue(state, (queue) => {
    const host = queue.host('http', 8080, 'b.test');
    queue.update(host, { robotsOid: 12, robotsTime: 1_700_000_000, errorCount: 3, backoffUntil: 1_700_003_600, queueKey: key, objectCounts: [1, 2, 3, 4] });
    assert.throws(() => queue.update(host, { errorCount: -1 }), RangeError);
    assert.throws(() => queue.update(host, { pushed: 5 } as never), RangeError);
    assert.throws(() => queue.update(host, { objectCounts: [1] }), RangeError);
  });
  withQueue(state, (queue) => {
    const host = queue.find('http', 8080, 'b.test')!;
    assert.deepEqual(
      { ...host, queueKey: host.queueKey.toString('hex') },
      {
        slot: 1, scheme: 'http', port: 8080, name: 'b.test', queued: 0, pushed: 0, consumed: 0, priority: 0,
        objectCounts: [1, 2, 3, 4], robotsOid: 12, robotsTime: 1_700_000_000, errorCount: 3, backoffUntil: 1_700_003_600,
        queueKey: key.toString('hex'),
      },
    );
    assert.equal(queue.find('https', 8080, 'b.test'), undefined, 'the protocol is part of the site');
  });
});

test('a host keeps its queue key in memory of its own, not a slice of a shared pool', (t) => {
  // A 16-byte slice of Node's 8 KiB Buffer pool keeps the whole slab alive as long as the host lives.
  const owns = (key: Buffer): boolean => key.byteOffset === 0 && key.buffer.byteLength === key.length;
  const state = scratchDir(t);
  withQueue(state, (queue) => {
    const host = queue.host('http', 80, 'c.test');
    assert.ok(owns(host.queueKey), 'a new host');
    const updated = queue.update(host, { queueKey: Buffer.from('20010db8000000000000000000000002', 'hex') });
    assert.ok(owns(updated.queueKey), 'after update()');
    assert.ok(owns(queue.get(host).queueKey), 'as get() returns it');
  });
  withQueue(state, (queue) => assert.ok(owns(queue.find('http', 80, 'c.test')!.queueKey), 'as read back from the file'));
});

test(`rests up to ${MAX_REST_LENGTH} bytes take a page each; longer ones and NUL are refused`, (t) => {
  const state = scratchDir(t);
  withQueue(state, (queue) => {
    const host = queue.host('http', 80, 'long.test');
    const longest = rest(1, MAX_REST_LENGTH);
    for (let i = 0; i < 3; i++) queue.push(host, longest, i);
    assert.equal(statSync(gatherPaths(state).queue).size, 4 * PAGE_SIZE, 'a full page each');
    queue.push(host, rest(2, MAX_REST_LENGTH - 1), 3);
    assert.throws(
      () => queue.push(host, rest(3, MAX_REST_LENGTH + 1), 0),
      (err: unknown) => isSherlockError(err, 'SHERLOCK_TOO_LARGE') && /2028 bytes/.test(err.message),
    );
    assert.throws(() => queue.push(host, '/a\0b', 0), RangeError);
    assert.throws(() => queue.push(host, '/a', -1), RangeError);
    assert.equal(queue.length(host), 4);
    assert.deepEqual([...queue.entries(host)].map((e) => e.rest.length), [MAX_REST_LENGTH, MAX_REST_LENGTH, MAX_REST_LENGTH, MAX_REST_LENGTH - 1]);
  });
});

test('drained pages are reused: filling and draining again adds no page', (t) => {
  const state = scratchDir(t);
  const file = gatherPaths(state).queue;
  withQueue(state, (queue) => {
    const hosts = Array.from({ length: 5 }, (_, i) => queue.host('http', 80, `h${i}.test`));
    let pages = 0;
    for (let cycle = 0; cycle < 6; cycle++) {
      for (let i = 0; i < 300; i++) queue.push(hosts[i % 5]!, rest(i, 100 + (i % 13) * 20), i);
      for (const host of hosts) {
        for (let entry = queue.take(host); entry !== undefined; entry = queue.take(host)) queue.done(host, entry.seq);
      }
      const report = queue.verify();
      assert.deepEqual(report.problems, []);
      assert.equal(report.freePages, report.pages, 'every page free once drained');
      if (cycle === 0) pages = report.pages;
      else assert.equal(report.pages, pages, `cycle ${cycle}`);
      assert.ok(statSync(file).size <= (pages + 1) * PAGE_SIZE);
    }
  });
});

test('a second writer is refused while the first holds the queue', (t) => {
  const state = scratchDir(t);
  withQueue(state, () => {
    assert.throws(() => GatherQueue.open(state), (err: unknown) => isSherlockError(err, 'SHERLOCK_LOCKED'));
  });
  withQueue(state, () => undefined);
});

test('host names longer than DNS allows are refused', (t) => {
  withQueue(scratchDir(t), (queue) => {
    assert.throws(() => queue.host('http', 80, 'x'.repeat(254)), (err: unknown) => isSherlockError(err, 'SHERLOCK_TOO_LARGE'));
    const longest = queue.host('http', 80, `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`);
    queue.push(longest, '/', 1);
    assert.equal(queue.take(longest)?.rest, '/', 'a refused host leaves the queue usable');
  });
});

// ------------------------------------------------------------ model

type Op = { kind: 'push'; host: number; length: number; priority: number } | { kind: 'done'; host: number } | { kind: 'reopen' };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('push' as const), host: fc.nat(5), length: fc.oneof(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 1500, max: MAX_REST_LENGTH })), priority: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('done' as const), host: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
);

test('random pushes, takes and dones over many hosts match a model, across reopens', (t) => {
  fc.assert(
    fc.property(fc.array(opArbitrary, { maxLength: 300 }), (ops) => {
      const state = scratchDir(t);
      const model: QueueEntry[][] = Array.from({ length: 6 }, () => []);
      const pushed = new Array<number>(6).fill(0);
      let queue = GatherQueue.open(state);
      const host = (i: number): Host => queue.host(i % 2 === 0 ? 'http' : 'https', 80 + i, `m${i}.test`);
      try {
        for (const op of ops) {
          if (op.kind === 'reopen') {
            queue.close();
            queue = GatherQueue.open(state);
          } else if (op.kind === 'push') {
            const entry = { rest: rest(pushed[op.host]!, op.length), priority: op.priority, seq: pushed[op.host]! };
            assert.equal(queue.push(host(op.host), entry.rest, entry.priority), entry.seq);
            model[op.host]!.push(entry);
            pushed[op.host]!++;
          } else {
            const head = queue.take(host(op.host));
            assert.deepEqual(head, model[op.host]![0]);
            if (head !== undefined) queue.done(host(op.host), head.seq);
            model[op.host]!.shift();
          }
        }
        queue.close();
        queue = GatherQueue.open(state);
        model.forEach((entries, i) => {
          const found = queue.find(i % 2 === 0 ? 'http' : 'https', 80 + i, `m${i}.test`);
          assert.deepEqual(found === undefined ? [] : [...queue.entries(found)], entries);
          if (found !== undefined) assert.equal(found.priority, entries[0]?.priority ?? 0);
        });
        const report = queue.verify();
        assert.deepEqual(report.problems, []);
        assert.equal(report.queued, model.reduce((sum, entries) => sum + entries.length, 0));
      } finally {
        queue.close();
      }
    }),
    { numRuns: 60 },
  );
});

// ------------------------------------------------------------ damage and recovery

/**
 * A queue whose host d.test (slot 2) holds 20 entries of 305 bytes, six to a
 * page, in the chain 6 → 5 → 4 → 3; pages 2 → 1 are the free list (spare.test,
 * slot 1, used pages 1–6 and gave them back, last freed first).
 */
function fixture(t: TestContext): { state: string; file: string; hosts: string } {
  const state = scratchDir(t);
  withQueue(state, (queue) => {
    const spare = queue.host('http', 80, 'spare.test');
    for (let i = 0; i < 6; i++) queue.push(spare, rest(i, 1500), i);
    for (let i = 0; i < 6; i++) queue.done(spare, i);
    const host = queue.host('http', 80, 'd.test');
    for (let i = 0; i < 20; i++) queue.push(host, rest(i, 300), i);
  });
  const { queue: file, hosts } = gatherPaths(state);
  return { state, file, hosts };
}

/** The page numbers of d.test's chain (slot 2), read straight from the files. */
function chainOf(state: string): number[] {
  const { queue, hosts } = gatherPaths(state);
  const pages: number[] = [];
  for (let page = readBytes(hosts, 2 * HOST_RECORD_SIZE + 4, 4).readUInt32LE(0); page !== 0 && pages.length < 10; page = readBytes(queue, page * PAGE_SIZE, 4).readUInt32LE(0)) {
    pages.push(page);
  }
  return pages;
}

/** Rewrites u32 fields of host record `slot` (byte offset in the record → value) with a fresh CRC. */
function patchRecord(file: string, slot: number, fields: Record<number, number>): void {
  const record = readBytes(file, slot * HOST_RECORD_SIZE, HOST_RECORD_SIZE);
  for (const [at, value] of Object.entries(fields)) record.writeUInt32LE(value, Number(at));
  record.writeUInt32LE(crc32(record.subarray(0, 508)), 508);
  patch(file, slot * HOST_RECORD_SIZE, record);
}

test('the fixture has the layout the damage tests assume', (t) => {
  const { state } = fixture(t);
  withQueue(state, (queue) => {
    assert.deepEqual(chainOf(state), [6, 5, 4, 3]);
    const report = queue.verify();
    assert.deepEqual([report.pages, report.freePages, report.queued, report.problems.length], [6, 2, 20, 0]);
  });
});

test('a flipped bit in a queued page is reported with the page offset', (t) => {
  const { state, file } = fixture(t);
  const byte = readBytes(file, 5 * PAGE_SIZE + 100, 1)[0]!;
  patch(file, 5 * PAGE_SIZE + 100, Buffer.from([byte ^ 0x10]));
  withQueue(state, (queue) => {
    const host = queue.find('http', 80, 'd.test')!;
    assert.equal(queue.take(host)?.seq, 0, 'the head page is intact');
    throwsCorrupt(() => [...queue.entries(host)], file, 5 * PAGE_SIZE, /page 5: CRC-32 mismatch/);
    const problems = queue.verify().problems;
    assert.deepEqual([problems[0]?.file, problems[0]?.offset], [file, 5 * PAGE_SIZE]);
    // The pages behind the damage are unreachable now, and said so.
    assert.deepEqual(problems.slice(1).map((p) => p.offset), [3 * PAGE_SIZE, 4 * PAGE_SIZE, 5 * PAGE_SIZE]);
  });
});

test('a truncated queue file is reported where it ends', (t) => {
  const { state, file } = fixture(t);
  truncateSync(file, 6 * PAGE_SIZE + 100);
  withQueue(state, (queue) => {
    throwsCorrupt(() => queue.take(queue.find('http', 80, 'd.test')!), file, 6 * PAGE_SIZE + 100, /cut short/);
  });
  truncateSync(file, 30);
  throwsCorrupt(() => GatherQueue.open(state), file, 30, /header cut short/);
});

test('a damaged queue header stops opening, naming the offset', (t) => {
  const { state, file } = fixture(t);
  patch(file, 25, Buffer.from([0x7f]));
  throwsCorrupt(() => GatherQueue.open(state), file, 48, /header CRC-32 mismatch/);
});

test('a cycle in a chain is reported, not followed', (t) => {
  const { state, file } = fixture(t);
  patchNext(file, 4, 6);
  withQueue(state, (queue) => {
    throwsCorrupt(() => [...queue.entries(queue.find('http', 80, 'd.test')!)], file, 4 * PAGE_SIZE, /longer than the file \(a cycle\)/);
    assert.ok(queue.verify().problems.some((p) => /page 6 is in the chain of host 2 and in the chain of host 2/.test(p.message)));
  });
});

test('a dangling link is reported with the offset of the page holding it', (t) => {
  const { state, file } = fixture(t);
  patchNext(file, 4, 99);
  withQueue(state, (queue) => {
    throwsCorrupt(() => [...queue.entries(queue.find('http', 80, 'd.test')!)], file, 4 * PAGE_SIZE, /page 4 links to page 99/);
  });
});

test('a page both free and in a chain is found, and never handed out', (t) => {
  const { state, file } = fixture(t);
  patchHeader(file, { 28: 4 });
  withQueue(state, (queue) => {
    const problems = queue.verify().problems;
    assert.ok(problems.some((p) => p.offset === 4 * PAGE_SIZE + 4 && /page 4 belongs to host 2, not the free list/.test(p.message)), JSON.stringify(problems));
    assert.ok(problems.some((p) => p.offset === 2 * PAGE_SIZE && /neither free nor in a chain/.test(p.message)));
    const other = queue.host('http', 80, 'new.test');
    throwsCorrupt(() => queue.push(other, '/x', 1), file, 4 * PAGE_SIZE + 4);
    assert.equal(queue.length(other), 0);
    assert.throws(() => queue.push(other, '/y', 1), /reopen the queue/, 'no more writes into a damaged queue');
  });
});

test('opening undoes an allocation that a crash cut before its commit', (t) => {
  const { state, file } = fixture(t);
  // As after push steps 1 and 3: page 2 taken off the free list and linked behind page 3, host record untouched.
  patchHeader(file, { 28: 1, 32: 1, 36: 1, 40: 2, 44: 2 });
  patchNext(file, 3, 2);
  withQueue(state, (queue) => {
    assert.match(queue.recovered ?? '', /undid the allocation of page 2/);
    const report = queue.verify();
    assert.deepEqual([report.freePages, report.queued, report.problems], [2, 20, []]);
    assert.deepEqual(chainOf(state), [6, 5, 4, 3]);
  });
  withQueue(state, (queue) => assert.equal(queue.recovered, undefined, 'recovery is done once'));
});

test('opening finishes freeing a page whose done() committed before a crash', (t) => {
  const { state, file, hosts } = fixture(t);
  withQueue(state, (queue) => {
    const host = queue.find('http', 80, 'd.test')!;
    for (let i = 0; i < 5; i++) queue.done(host, i);
  });
  // As after done steps 1 and 2 for entry 5, the last of page 6: intent recorded, host record moved to page 5.
  patchHeader(file, { 36: 2, 40: 6, 44: 2 });
  patchRecord(hosts, 2, { 4: 5, 8: 16, 24: 6, 60: 6 });
  withQueue(state, (queue) => {
    assert.match(queue.recovered ?? '', /finished freeing page 6/);
    const report = queue.verify();
    assert.deepEqual([report.freePages, report.queued, report.problems], [3, 14, []]);
    const host = queue.find('http', 80, 'd.test')!;
    assert.deepEqual([...queue.entries(host)].map((e) => e.seq), Array.from({ length: 14 }, (_, i) => i + 6));
  });
});

test('opening drops the intent of a done() that a crash cut before its commit', (t) => {
  const { state, file } = fixture(t);
  patchHeader(file, { 36: 2, 40: 6, 44: 2 });
  withQueue(state, (queue) => {
    assert.equal(queue.recovered, undefined);
    const report = queue.verify();
    assert.deepEqual([report.freePages, report.queued, report.problems], [2, 20, []]);
  });
});
