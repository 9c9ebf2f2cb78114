/**
 * kill -9 of a real writer process (test/helpers/bucket-writer-child.ts) at
 * random moments and in the middle of a large streamed bucket: after each
 * kill, the next writer repairs the file and every bucket the victim
 * acknowledged reads back byte-identical.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BucketReader, BucketWriter } from '../../../common/bucket/file.js';
import { isSherlockError } from '../../../common/errors.js';
import { bucketPayload, random } from '../../helpers/bucket-payload.js';
import { repoRoot, scratchDir } from '../../helpers/paths.js';

const writerChild = join(repoRoot, 'dist', 'test', 'helpers', 'bucket-writer-child.js');
const ROUNDS = 20;
/** Rounds that kill inside a streamed bucket rather than at a random moment. */
const STREAM_ROUNDS = new Set([4, 13]);

interface Victim {
  /** Complete stdout lines so far. */
  lines: string[];
  /** Resolves once a line starting with `prefix` has arrived. */
  waitFor(prefix: string): Promise<string>;
  kill(): Promise<void>;
}

function startWriter(path: string, mode: 'loop' | 'stream', seed: number): Victim {
  const child = spawn(process.execPath, [writerChild, path, mode, String(seed)], { stdio: ['ignore', 'pipe', 'inherit'] });
  // 'close': the process has exited and its stdout is drained.
  const exited = once(child, 'close');
  const lines: string[] = [];
  let partial = '';
  const waiters: Array<{ prefix: string; resolve: (line: string) => void }> = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!; // a line cut by the kill is ignored
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters.filter((w) => line.startsWith(w.prefix))) waiter.resolve(line);
    }
  });
  return {
    lines,
    waitFor(prefix) {
      const seen = lines.find((line) => line.startsWith(prefix));
      if (seen !== undefined) return Promise.resolve(seen);
      return Promise.race([
        new Promise<string>((resolve) => waiters.push({ prefix, resolve })),
        exited.then(([code]) => Promise.reject(new Error(`writer exited with ${String(code)} before "${prefix}"`))),
      ]);
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

test('kill -9 of the writer never loses or damages an acknowledged bucket', { timeout: 120_000 }, async (t) => {
  const path = join(scratchDir(t), 'gather', 'buckets');
  // Kill delays are random; SHERLOCK_CRASH_SEED replays a run.
  const killSeed = Number(process.env['SHERLOCK_CRASH_SEED'] ?? Date.now() % 1_000_000);
  t.diagnostic(`SHERLOCK_CRASH_SEED=${killSeed}`);
  const pick = random(killSeed);
  /** oid → what the victim acknowledged writing there. */
  const acked = new Map<number, { seed: number; index: number; expected: ReturnType<typeof bucketPayload> }>();
  let cuts = 0;

  for (let round = 0; round < ROUNDS; round++) {
    const seed = round + 1;
    const streaming = STREAM_ROUNDS.has(round);
    const firstNew = existsSync(path) ? statSync(path).size / 128 : 1;
    const victim = startWriter(path, streaming ? 'stream' : 'loop', seed);
    let streamOffset: number | undefined;
    if (streaming) {
      streamOffset = Number((await victim.waitFor('streaming ')).split(' ')[1]) * 128;
      // Past the last acknowledged end: the stream's header and some of its data are on disk.
      while (statSync(path).size < streamOffset + 16 + 3 * 65536) await sleep(2);
    } else {
      await victim.waitFor('ack ');
      // While it writes: no second writer, and a reader sees only whole buckets.
      assert.throws(() => BucketWriter.open(path), (err: unknown) => isSherlockError(err, 'SHERLOCK_LOCKED'));
      const reader = BucketReader.open(path);
      try {
        for (const stored of reader.buckets({ from: firstNew })) reader.decode(stored);
      } finally {
        reader.close();
      }
      await sleep(pick() * 20);
    }
    await victim.kill();

    for (const line of victim.lines) {
      const [word, oid, index] = line.split(' ');
      if (word === 'ack') acked.set(Number(oid), { seed, index: Number(index), expected: bucketPayload(seed, Number(index)) });
    }
    const writer = BucketWriter.open(path);
    try {
      if (writer.repair.cut !== undefined) cuts++;
      assert.deepEqual(writer.repair.damaged, [], `round ${round}: no damage in the middle`);
      if (streamOffset !== undefined) {
        assert.equal(writer.repair.cut?.offset, streamOffset, `round ${round}: the streamed bucket is cut off`);
        assert.equal(statSync(path).size, streamOffset);
      }
      for (const [oid, { seed: bucketSeed, index, expected }] of acked) {
        const stored = writer.read(oid);
        assert.equal(stored.type, expected.type, `round ${round}: type of bucket ${oid}`);
        assert.ok(stored.data.equals(expected.data), `round ${round}: bucket ${oid} (seed ${bucketSeed}, index ${index}) differs`);
      }
      const report = writer.verify();
      assert.deepEqual(report.problems, [], `round ${round}`);
      assert.equal(report.writing, false);
      assert.ok(report.buckets >= acked.size);
    } finally {
      writer.close();
    }
  }
  assert.ok(cuts >= STREAM_ROUNDS.size, `${cuts} repairs cut an unfinished bucket`);
  assert.ok(acked.size > ROUNDS, `only ${acked.size} buckets acknowledged`);
});
