/**
 * kill -9 of a real queue writer (test/helpers/queue-writer-child.ts) at
 * random moments, many times: after each kill the queue reopens (finishing or
 * undoing the cut operation), verify() finds every page in exactly one place,
 * every acknowledged push not acknowledged as done is still queued in order,
 * and nothing acknowledged as done comes back.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSherlockError } from '../../../common/errors.js';
import { GatherQueue } from '../../../common/gather/queue-file.js';
import { random } from '../../helpers/bucket-payload.js';
import { repoRoot, scratchDir } from '../../helpers/paths.js';
import { QUEUE_CHILD_HOSTS, queueEntry } from '../../helpers/queue-entries.js';

const writerChild = join(repoRoot, 'dist', 'test', 'helpers', 'queue-writer-child.js');
const ROUNDS = 30;

interface Run {
  lines: string[];
  ready: Promise<void>;
  kill(): Promise<void>;
}

function startWriter(state: string, seed: number): Run {
  const child = spawn(process.execPath, [writerChild, state, String(seed)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'close');
  const lines: string[] = [];
  let partial = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!; // a line cut by the kill is ignored
    for (const line of parts) {
      if (line === 'ready') markReady();
      lines.push(line);
    }
  });
  return {
    lines,
    ready: Promise.race([ready, exited.then(([code]) => Promise.reject(new Error(`writer exited with ${String(code)}`)))]),
    async kill() {
      child.kill('SIGKILL');
      const [code, signal] = await exited;
      assert.equal(signal, 'SIGKILL', `the writer exited by itself (${String(code)}) before the kill`);
    },
  };
}

test('kill -9 of the queue writer never loses an acknowledged push nor revives a done entry', { timeout: 120_000 }, async (t) => {
  const state = scratchDir(t);
  const killSeed = Number(process.env['SHERLOCK_CRASH_SEED'] ?? Date.now() % 1_000_000);
  t.diagnostic(`SHERLOCK_CRASH_SEED=${killSeed}`);
  const pick = random(killSeed);
  /** Per slot: entries pushed and consumed as of the last check. */
  const pushed = new Map<number, number>();
  const consumed = new Map<number, number>();
  let acks = 0;
  let recoveries = 0;

  for (let round = 0; round < ROUNDS; round++) {
    const victim = startWriter(state, killSeed * 100 + round);
    await victim.ready;
    if (round === 0) {
      assert.throws(() => GatherQueue.open(state), (err: unknown) => isSherlockError(err, 'SHERLOCK_LOCKED'));
    }
    await sleep(pick() * 40);
    await victim.kill();

    let inFlight: { op: string; slot: number } | undefined;
    for (const line of victim.lines) {
      const [word, op, slotText, seqText] = line.split(' ');
      const slot = Number(slotText);
      if (word === 'try') inFlight = { op: op!, slot };
      if (word !== 'ack') continue;
      inFlight = undefined;
      acks++;
      const counts = op === 'push' ? pushed : consumed;
      assert.equal(Number(seqText), counts.get(slot) ?? 0, `round ${round}: ${line} out of order`);
      counts.set(slot, Number(seqText) + 1);
    }

    const queue = GatherQueue.open(state);
    try {
      if (queue.recovered !== undefined) recoveries++;
      const report = queue.verify();
      assert.deepEqual(report.problems, [], `round ${round}`);
      for (const host of queue.hosts()) {
        const { slot } = host;
        for (const [counts, actual, op] of [[pushed, host.pushed, 'push'], [consumed, host.consumed, 'done']] as const) {
          const acked = counts.get(slot) ?? 0;
          const cut = inFlight?.slot === slot && inFlight.op === op ? 1 : 0;
          assert.ok(actual === acked || actual === acked + cut, `round ${round}, host ${slot}: ${op} count ${actual}, ${acked} acknowledged`);
          counts.set(slot, actual); // the cut operation either happened or not; both are fine
        }
        const seqs = [...queue.entries(host)];
        assert.equal(seqs.length, host.pushed - host.consumed);
        seqs.forEach((entry, i) => {
          const seq = host.consumed + i;
          assert.equal(entry.seq, seq);
          assert.deepEqual({ rest: entry.rest, priority: entry.priority }, queueEntry(slot, seq), `round ${round}, host ${slot}, entry ${seq}`);
        });
        const head = queue.take(host);
        assert.equal(head?.priority ?? 0, host.priority, `round ${round}, host ${slot}: head priority`);
      }
      assert.equal(report.hosts, QUEUE_CHILD_HOSTS);
    } finally {
      queue.close();
    }
  }
  t.diagnostic(`${acks} acknowledged operations, ${recoveries} recoveries`);
  assert.ok(acks > ROUNDS * 10, `only ${acks} operations acknowledged`);
});
