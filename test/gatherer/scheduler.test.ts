/**
 * The politeness scheduler (gatherer/scheduler.ts), driven with a fake clock:
 * one request per queue key at a time (or as many as its hosts' smallest
 * `connections`, each slot resting after its own), keys rest after a request,
 * hosts may be held back on their own, lower priority bands first and round
 * robin within a band.
 */

import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { PRIORITY_BAND } from '../../common/gather/plan-file.js';
import { Scheduler } from '../../gatherer/scheduler.js';

/** A priority in band `band` with rank `rank`. */
const P = (band: number, rank: number): number => band * PRIORITY_BAND + rank;

/** Takes and releases at once (delay 0) n times at `now`, giving the slots handed out. */
function cycle(s: Scheduler, n: number, now = 0): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const slot = s.take(now);
    assert.notEqual(slot, undefined, `take ${i} found nothing ready`);
    out.push(slot!);
    s.release(slot!, now, 0);
  }
  return out;
}

test('a key is handed out once until released', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 1 }, 0);
  s.set(2, { key: 'K', priority: 1 }, 0);
  assert.equal(s.take(0), 1);
  assert.equal(s.busy, 1);
  assert.equal(s.take(0), undefined, 'the other host shares the busy key');
  assert.equal(s.take(1000), undefined);
  s.release(1, 5, 0);
  assert.equal(s.busy, 0);
  assert.equal(s.take(5), 2);
});

test('release with a delay rests the key that long, and wakeAt() says when', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 1 }, 0);
  assert.equal(s.take(0), 1);
  s.release(1, 100, 500);
  assert.equal(s.take(100), undefined);
  assert.equal(s.take(599), undefined);
  assert.equal(s.wakeAt(), 600);
  assert.equal(s.take(600), 1);
});

test('a resting key does not hold back the other keys', () => {
  const s = new Scheduler();
  s.set(1, { key: 'A', priority: 1 }, 0);
  s.set(2, { key: 'B', priority: 5 }, 0);
  assert.equal(s.take(0), 1);
  s.release(1, 0, 1000);
  assert.equal(s.take(0), 2);
  assert.equal(s.busy, 1);
});

test('release of a host with no request out throws', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 1 }, 0);
  assert.throws(() => s.release(1, 0, 0), /no request/);
  assert.throws(() => s.release(9, 0, 0), /no request/);
  assert.equal(s.take(0), 1);
  s.release(1, 0, 0);
  assert.throws(() => s.release(1, 0, 0), /no request/);
});

test('two hosts on one key alternate at equal priority', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 3 }, 0);
  s.set(2, { key: 'K', priority: 3 }, 0);
  assert.deepEqual(cycle(s, 6), [1, 2, 1, 2, 1, 2]);
});

test('within a key the host in the lower priority band goes first', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: P(1, 9) }, 0);
  s.set(2, { key: 'K', priority: P(0, 3) }, 0);
  assert.deepEqual(cycle(s, 3), [2, 2, 2]);
  s.set(2, { priority: undefined }, 0);
  assert.deepEqual(cycle(s, 2), [1, 1]);
});

test('within a key and a band, hosts take turns whatever their ranks (no host starves behind better-ranked URLs)', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: P(1, 0) }, 0);
  s.set(2, { key: 'K', priority: P(1, 900) }, 0);
  s.set(3, { key: 'K', priority: P(1, 5) }, 0);
  const order = cycle(s, 9);
  assert.deepEqual(order.slice(3), [...order.slice(0, 3), ...order.slice(0, 3)], 'round robin repeats');
  assert.deepEqual([...order.slice(0, 3)].sort(), [1, 2, 3]);
});

test('across keys the lower band goes first, keys of one band in turn whatever their ranks', () => {
  const s = new Scheduler();
  s.set(1, { key: 'A', priority: P(2, 0) }, 0);
  s.set(2, { key: 'B', priority: P(0, 10) }, 0);
  s.set(3, { key: 'C', priority: P(1, 30) }, 0);
  assert.deepEqual([s.take(0), s.take(0), s.take(0)], [2, 3, 1]);
  for (const slot of [1, 2, 3]) s.release(slot, 0, 0);
  s.set(1, { priority: P(1, 70) }, 0);
  s.set(2, { priority: P(1, 3) }, 0);
  const order = cycle(s, 6);
  assert.deepEqual(order.slice(3), order.slice(0, 3), 'round robin repeats');
  assert.deepEqual([...order.slice(0, 3)].sort(), [1, 2, 3]);
});

test('a priority change of a waiting host reorders the keys', () => {
  const s = new Scheduler();
  s.set(1, { key: 'A', priority: P(1, 1) }, 0);
  s.set(2, { key: 'B', priority: P(1, 2) }, 0);
  s.set(2, { priority: P(0, 0) }, 0);
  assert.equal(s.take(0), 2);
});

test('a host with nothing to do is not handed out', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K' }, 0);
  assert.equal(s.take(0), undefined);
  s.set(1, { priority: 4 }, 0);
  assert.equal(s.take(0), 1);
  s.release(1, 0, 0);
  s.set(1, { priority: undefined }, 0);
  assert.equal(s.take(0), undefined);
  assert.equal(s.wakeAt(), undefined);
});

test('notBefore holds a host back, wakeAt() reports it, other hosts of its key go meanwhile', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 1, notBefore: 1000 }, 0);
  assert.equal(s.take(0), undefined);
  assert.equal(s.wakeAt(), 1000);
  assert.equal(s.take(999), undefined);
  s.set(2, { key: 'K', priority: 5 }, 999);
  assert.equal(s.take(999), 2, 'a host of the same key that is not held back');
  s.release(2, 999, 0);
  s.set(2, { priority: undefined }, 999);
  assert.equal(s.take(999), undefined);
  assert.equal(s.wakeAt(), 1000);
  assert.equal(s.take(1000), 1);
});

test('notBefore set while the key rests is kept after the rest', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 1 }, 0);
  assert.equal(s.take(0), 1);
  s.release(1, 0, 100);
  s.set(1, { notBefore: 300 }, 50);
  assert.equal(s.take(100), undefined);
  assert.ok(s.wakeAt() !== undefined && s.wakeAt()! <= 300);
  assert.equal(s.take(299), undefined);
  assert.equal(s.take(300), 1);
});

test('a host without a key is never handed out', () => {
  const s = new Scheduler();
  s.set(1, { priority: 0 }, 0);
  s.set(2, { priority: 0, key: undefined }, 0);
  assert.equal(s.take(0), undefined);
  assert.equal(s.take(1e12), undefined);
  assert.equal(s.wakeAt(), undefined);
  s.set(1, { key: 'K' }, 10);
  assert.equal(s.take(10), 1);
});

test('a host taken off its key (key undefined) is no longer handed out', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 0 }, 0);
  s.set(1, { key: undefined }, 0);
  assert.equal(s.take(0), undefined);
});

test('a host moved to a new key goes with the new key, and leaves the old one free', () => {
  const s = new Scheduler();
  s.set(1, { key: 'A', priority: 1 }, 0);
  s.set(2, { key: 'A', priority: 1 }, 0);
  s.set(3, { key: 'B', priority: P(1, 2) }, 0);
  assert.equal(s.take(0), 1);
  s.release(1, 0, 1000); // A rests until 1000
  s.set(2, { key: 'B' }, 10);
  assert.equal(s.take(10), 2, 'host 2 is on B now, not on the resting A');
  assert.equal(s.take(10), undefined, 'B is busy, A rests');
  s.release(2, 10, 0);
  s.set(1, { key: 'C' }, 20);
  assert.equal(s.take(20), 1, 'moved off the resting key A, host 1 need not wait for it');
  assert.equal(s.take(20), 2);
  s.release(1, 20, 0);
  s.release(2, 20, 0);
  s.set(1, { priority: undefined }, 20);
  s.set(2, { priority: undefined }, 20);
  assert.equal(s.take(20), 3, 'B still hands out its remaining host');
});

test('a stale timer of a key emptied by a move leaves the key of the same id made since alone', () => {
  const s = new Scheduler();
  // Host 1 on K, held back until 1000: K gets a timer for 1000.
  s.set(1, { key: 'K', priority: 1, notBefore: 1000 }, 0);
  // Host 1 moves away: K has no host and no rest, so it is forgotten (its timer stays in the heap).
  s.set(1, { key: 'L' }, 10);
  // Host 2 comes to K: a new state for K, handed out.
  s.set(2, { key: 'K', priority: 1 }, 20);
  assert.equal(s.take(20), 2);
  // The old timer fires while host 2's request to K is out.
  s.set(3, { key: 'K', priority: 1 }, 1000);
  assert.equal(s.take(1000), 1, 'host 1 on L is due');
  assert.equal(s.take(1000), undefined, 'K is busy with host 2: host 3 must wait');
  s.release(2, 1001, 0);
  assert.equal(s.take(1001), 3);
});

test('a host moved to another key while its request is out releases the key the request went to', () => {
  const s = new Scheduler();
  s.set(1, { key: 'A', priority: 1 }, 0);
  s.set(2, { key: 'A', priority: 1 }, 0);
  assert.equal(s.take(0), 1);
  s.set(1, { key: 'B' }, 1);
  assert.equal(s.take(1), undefined, 'host 1 is still out; A is busy');
  s.release(1, 2, 0);
  assert.deepEqual([s.take(2), s.take(2)].sort(), [1, 2], 'A is free again (host 2), and host 1 is ready on B');
});

test(
  'a host moved while its request is out is handed out on its new key once released',
  () => {
    const s = new Scheduler();
    s.set(4, { key: 'a', priority: 0 }, 0);
    assert.equal(s.take(0), 4);
    s.set(4, { key: 'b' }, 0);
    assert.equal(s.take(0), undefined, 'its request is still out');
    s.release(4, 0, 0);
    assert.equal(s.take(0), 4);
  },
);

test('requests of a host that moved address between them and end out of order each free the key they went to (tickets)', () => {
  const s = new Scheduler();
  s.set(1, { key: 'A', priority: P(0, 0), connections: 3 }, 0);
  s.set(2, { key: 'A', priority: P(1, 0) }, 0);
  const first = s.takeTicket(0);
  assert.deepEqual(first, { slot: 1, key: 'A' }, 'host 2 makes A a one-slot key; host 1 goes first by band');
  s.set(1, { key: 'B' }, 1);
  const later = [s.takeTicket(1), s.takeTicket(1)];
  assert.deepEqual(later, [{ slot: 1, key: 'B' }, { slot: 1, key: 'B' }], 'host 1 alone on B: its third request out, the host\'s cap');
  assert.equal(s.takeTicket(1), undefined, 'A holds its one request (host 2 waits); host 1 has its three out');
  // A later request (on B) ends first: a slot of B is freed, A stays busy with host 1's first request.
  s.release(later[1]!, 2, 0);
  assert.deepEqual(s.takeTicket(2), { slot: 1, key: 'B' }, 'the freed slot is B\'s');
  assert.equal(s.takeTicket(2), undefined, 'A is still busy: host 2 waits');
  s.release(first!, 3, 0);
  assert.deepEqual([s.takeTicket(3), s.takeTicket(3)], [{ slot: 1, key: 'B' }, { slot: 2, key: 'A' }], 'A is free once the request that went to it ends (host 1 goes first by band, on B)');
  assert.equal(s.busy, 4);
  assert.throws(() => s.release(first!, 4, 0), /no request/, 'a ticket whose key has no request of the host out');
});

test('connections = 3 gives a key three slots, even to one host, and each slot rests after its own request', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 1, connections: 3 }, 0);
  assert.deepEqual([s.take(0), s.take(0), s.take(0)], [1, 1, 1]);
  assert.equal(s.take(0), undefined, 'a fourth would be a fourth request at once');
  assert.equal(s.busy, 3);
  s.release(1, 100, 500);
  assert.equal(s.take(100), undefined, 'the freed slot rests');
  s.release(1, 200, 0);
  assert.equal(s.take(200), 1, 'a slot released without a rest is free at once');
  assert.equal(s.take(200), undefined);
  assert.equal(s.nextAt(1), 600, 'two slots out, the third rests until 600');
  s.release(1, 300, 500);
  s.release(1, 400, 500);
  assert.equal(s.nextAt(1), 600);
  assert.equal(s.wakeAt(), 600);
  assert.equal(s.take(599), undefined);
  assert.equal(s.take(600), 1);
  assert.equal(s.take(600), undefined, 'the next slot rests until 800');
  assert.equal(s.take(800), 1);
});

test('the slots of a shared key are the smallest connections of its hosts, and a lowered value waits for releases', () => {
  const s = new Scheduler();
  s.set(1, { key: 'K', priority: 1, connections: 4 }, 0);
  s.set(2, { key: 'K', priority: 1, connections: 2 }, 0);
  assert.notEqual(s.take(0), undefined);
  assert.notEqual(s.take(0), undefined);
  assert.equal(s.take(0), undefined, 'the stricter host sets two');
  s.set(2, { key: 'K', priority: 1 }, 0);
  s.set(3, { key: 'L', priority: 1, connections: 2 }, 0);
  s.set(3, { connections: 1 }, 0);
  assert.equal(s.take(0), 3);
  assert.equal(s.take(0), undefined, 'L is down to one slot');
  s.set(2, { connections: 1 }, 0);
  s.release(1, 0, 0);
  assert.equal(s.take(0), undefined, 'K is down to one slot and one request is still out');
  s.release(s.busy > 1 ? 2 : 1, 0, 0);
  assert.equal(s.busy, 1);
  assert.notEqual(s.take(0), undefined);
});

test('with 1,000 hosts on 100 keys, every key is handed out before any key twice, every host before any host twice', () => {
  const s = new Scheduler();
  const keyOf = (slot: number): string => `10.0.0.${slot % 100}`;
  for (let slot = 1; slot <= 1000; slot++) s.set(slot, { key: keyOf(slot), priority: 7 }, 0);
  const order = cycle(s, 2000);
  for (let round = 0; round < 20; round++) {
    const keys = new Set(order.slice(round * 100, round * 100 + 100).map(keyOf));
    assert.equal(keys.size, 100, `round ${round} handed out ${keys.size} keys`);
  }
  assert.equal(new Set(order.slice(0, 1000)).size, 1000);
  assert.deepEqual(order.slice(1000), order.slice(0, 1000));
});

test('hosts take turns across keys: an address shared by 20 hosts gets 20 turns to one for a lone host, every host before any host twice', () => {
  const s = new Scheduler();
  for (let slot = 1; slot <= 20; slot++) s.set(slot, { key: 'shared', priority: 7 }, 0);
  for (let slot = 21; slot <= 40; slot++) s.set(slot, { key: `lone-${slot}`, priority: 7 }, 0);
  const order = cycle(s, 80);
  assert.equal(new Set(order.slice(0, 40)).size, 40);
  assert.equal(new Set(order.slice(40)).size, 40);
});

test('with 100 keys all busy, take() finds nothing, and each release frees exactly its key', () => {
  const s = new Scheduler();
  for (let slot = 1; slot <= 1000; slot++) s.set(slot, { key: `k${slot % 100}`, priority: 1 }, 0);
  const out = [];
  for (let slot = s.take(0); slot !== undefined; slot = s.take(0)) out.push(slot);
  assert.equal(out.length, 100);
  assert.equal(s.busy, 100);
  s.release(out[0]!, 0, 0);
  const next = s.take(0)!;
  assert.equal(next % 100, out[0]! % 100);
  assert.equal(s.take(0), undefined);
});

// ------------------------------------------------------------ property

type Op =
  | { op: 'set'; slot: number; key?: string | null; priority?: number | null; notBefore?: number }
  | { op: 'take' }
  | { op: 'release'; pick: number; delay: number }
  | { op: 'advance'; by: number };

const KEYS = ['a', 'b', 'c', 'd'];

function opArb(moves: boolean): fc.Arbitrary<Op> {
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record(
        {
          op: fc.constant('set' as const),
          slot: fc.integer({ min: 1, max: 8 }),
          key: moves ? fc.option(fc.constantFrom(...KEYS), { nil: null }) : fc.constantFrom(...KEYS),
          priority: fc.option(fc.constantFrom(P(0, 0), P(0, 7), P(1, 0), P(1, 3), P(2, 1)), { nil: null }),
          notBefore: fc.integer({ min: 0, max: 400 }),
        },
        { requiredKeys: ['op', 'slot'] },
      ),
    },
    { weight: 4, arbitrary: fc.constant({ op: 'take' as const }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat(), delay: fc.constantFrom(0, 0, 10, 50, 200) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), by: fc.constantFrom(1, 10, 50, 100) }) },
  );
}

interface ModelHost {
  key: string | undefined;
  priority: number | undefined;
  notBefore: number;
}

/**
 * Runs the operations against a Scheduler and a plain model. Checked at each
 * take: the host handed out has a key, work and no hold, its key is neither
 * busy nor resting; when nothing is handed out, nothing is ready and wakeAt()
 * is no later than the first moment something will be.
 */
function runOps(ops: readonly Op[], moves: 'none' | 'idle' | 'any'): void {
  const s = new Scheduler();
  const hosts = new Map<number, ModelHost>();
  const nextAt = new Map<string, number>();
  /** Slot → the key its request went to. */
  const out = new Map<number, string>();
  let now = 0;
  const busyKeys = (): Set<string> => new Set(out.values());
  const readyAt = (h: ModelHost): number => Math.max(h.notBefore, nextAt.get(h.key!) ?? 0);
  /** Hosts with a key and work, not out themselves, on a key not busy. */
  const candidates = (): ModelHost[] =>
    [...hosts].filter(([slot, h]) => h.key !== undefined && h.priority !== undefined && !out.has(slot) && !busyKeys().has(h.key)).map(([, h]) => h);
  for (const op of ops) {
    switch (op.op) {
      case 'set': {
        let host = hosts.get(op.slot);
        if (host === undefined) hosts.set(op.slot, (host = { key: undefined, priority: undefined, notBefore: 0 }));
        const work: { key?: string; priority?: number; notBefore?: number } = {};
        // Without moves a host keeps the first key it is given; 'idle' moves only hosts whose request is not out.
        const keyAllowed = op.key !== undefined && (host.key === undefined || moves === 'any' || (moves === 'idle' && !out.has(op.slot)));
        if (keyAllowed) work.key = op.key ?? undefined;
        if (op.priority !== undefined) work.priority = op.priority ?? undefined;
        if (op.notBefore !== undefined) work.notBefore = now + op.notBefore;
        s.set(op.slot, work, now);
        if ('key' in work) host.key = work.key;
        if ('priority' in work) host.priority = work.priority;
        if (work.notBefore !== undefined) host.notBefore = work.notBefore;
        break;
      }
      case 'take': {
        const slot = s.take(now);
        if (slot !== undefined) {
          const host = hosts.get(slot);
          assert.ok(host !== undefined, `take gave unknown slot ${slot}`);
          assert.ok(host.key !== undefined, `slot ${slot} handed out without a key`);
          assert.ok(host.priority !== undefined, `slot ${slot} handed out with nothing to do`);
          assert.ok(!busyKeys().has(host.key), `key ${host.key} handed out while busy (slot ${slot})`);
          assert.ok(!out.has(slot), `slot ${slot} handed out while its request is out`);
          assert.ok(host.notBefore <= now, `slot ${slot} handed out at ${now} before its notBefore ${host.notBefore}`);
          assert.ok((nextAt.get(host.key) ?? 0) <= now, `key ${host.key} handed out at ${now} before its nextAt ${nextAt.get(host.key)}`);
          // Lowest band among the ready hosts.
          const band = (h: { priority: number | undefined }) => Math.floor(h.priority! / PRIORITY_BAND);
          const best = Math.min(...candidates().filter((h) => readyAt(h) <= now).map(band));
          assert.equal(band(host), best, `slot ${slot} (priority ${host.priority}) taken while band ${best} was ready`);
          out.set(slot, host.key);
        } else {
          const waiting = candidates();
          const ready = waiting.filter((h) => readyAt(h) <= now);
          assert.equal(ready.length, 0, `take found nothing at ${now} while ${ready.length} host(s) were ready`);
          if (waiting.length > 0) {
            const first = Math.min(...waiting.map(readyAt));
            const wake = s.wakeAt();
            assert.ok(wake !== undefined && wake <= first, `wakeAt() ${wake} but a host is ready at ${first}`);
          }
        }
        break;
      }
      case 'release': {
        if (out.size === 0) break;
        const slots = [...out.keys()];
        const slot = slots[op.pick % slots.length]!;
        s.release(slot, now, op.delay);
        nextAt.set(out.get(slot)!, now + op.delay);
        out.delete(slot);
        break;
      }
      case 'advance':
        now += op.by;
        break;
    }
    assert.equal(s.busy, out.size);
  }
}

test('random operations: no key handed out while busy or resting, nothing ready left waiting (property)', () => {
  fc.assert(
    fc.property(fc.array(opArb(false), { maxLength: 150, size: 'max' }), (ops) => runOps(ops, 'none')),
    { numRuns: 400 },
  );
});

test('random operations with hosts moving between keys while idle keep the same rules (property)', () => {
  fc.assert(
    fc.property(fc.array(opArb(true), { maxLength: 150, size: 'max' }), (ops) => runOps(ops, 'idle')),
    { numRuns: 400 },
  );
});

test(
  'random operations with hosts moving between keys, even while out, keep the same rules (property)',
  () => {
    fc.assert(
      fc.property(fc.array(opArb(true), { maxLength: 150, size: 'max' }), (ops) => runOps(ops, 'any')),
      { numRuns: 400 },
    );
  },
);

type SlotOp =
  | { op: 'set'; slot: number; connections?: number; priority?: number | null }
  | { op: 'take' }
  | { op: 'release'; pick: number; delay: number }
  | { op: 'advance'; by: number };

const slotOpArb: fc.Arbitrary<SlotOp> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record(
      { op: fc.constant('set' as const), slot: fc.integer({ min: 1, max: 6 }), connections: fc.integer({ min: 1, max: 4 }), priority: fc.option(fc.constantFrom(P(0, 0), P(1, 0)), { nil: null }) },
      { requiredKeys: ['op', 'slot'] },
    ),
  },
  { weight: 5, arbitrary: fc.constant({ op: 'take' as const }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat(), delay: fc.constantFrom(0, 10, 50) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), by: fc.constantFrom(1, 10, 50) }) },
);

/**
 * Hosts 1–6 on keys a (odd) and b (even) with random connections, against a
 * model of each key's slots: a take never goes past the smallest connections
 * of the key's hosts, counting requests out and slots resting, nor past a
 * host's own share; a take that finds nothing leaves no free slot with a
 * ready host.
 */
function runSlotOps(ops: readonly SlotOp[]): void {
  const s = new Scheduler();
  const keyOf = (slot: number): string => (slot % 2 === 1 ? 'a' : 'b');
  const hosts = new Map<number, { connections: number; priority: number | undefined }>();
  const out: number[] = [];
  const rests = new Map<string, number[]>([['a', []], ['b', []]]);
  const outOf = (key: string): number => out.filter((slot) => keyOf(slot) === key).length;
  let now = 0;
  const limit = (key: string): number => Math.min(...[...hosts].filter(([slot]) => keyOf(slot) === key).map(([, h]) => h.connections));
  const free = (key: string): number => limit(key) - outOf(key) - rests.get(key)!.filter((at) => at > now).length;
  const ready = (slot: number): boolean => hosts.get(slot)!.priority !== undefined && free(keyOf(slot)) > 0 && out.filter((o) => o === slot).length < limit(keyOf(slot));
  for (const op of ops) {
    switch (op.op) {
      case 'set': {
        const host = hosts.get(op.slot) ?? { connections: 1, priority: undefined };
        hosts.set(op.slot, host);
        if (op.connections !== undefined) host.connections = op.connections;
        if (op.priority !== undefined) host.priority = op.priority ?? undefined;
        s.set(op.slot, { key: keyOf(op.slot), connections: host.connections, priority: host.priority }, now);
        break;
      }
      case 'take': {
        const slot = s.take(now);
        if (slot === undefined) {
          const waiting = [...hosts.keys()].filter(ready);
          assert.equal(waiting.length, 0, `take found nothing at ${now} while host(s) ${waiting} had a free slot`);
        } else {
          assert.ok(ready(slot), `slot ${slot} handed out at ${now} without a free slot of key ${keyOf(slot)} (limit ${limit(keyOf(slot))})`);
          out.push(slot);
        }
        break;
      }
      case 'release': {
        if (out.length === 0) break;
        const slot = out[op.pick % out.length]!;
        s.release(slot, now, op.delay);
        out.splice(out.indexOf(slot), 1);
        rests.get(keyOf(slot))!.push(now + op.delay);
        break;
      }
      case 'advance':
        now += op.by;
        break;
    }
    assert.equal(s.busy, out.length);
  }
}

test('random operations with connections: a key never has more requests out or resting than its slots, nothing free left waiting (property)', () => {
  fc.assert(
    fc.property(fc.array(slotOpArb, { maxLength: 150, size: 'max' }), (ops) => runSlotOps(ops)),
    { numRuns: 400 },
  );
});
