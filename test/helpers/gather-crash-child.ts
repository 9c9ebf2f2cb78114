/**
 * A gatherer part to be killed at a chosen instant, for the crash tests of
 * plan-import.ts and store.ts. It kills itself with SIGKILL (no exit
 * handlers, no flushing: what a kill -9 leaves), so the test knows exactly
 * which step was cut.
 *
 *   node gather-crash-child.js import STATE push:K
 *     importPlans(STATE) with the K+1-th queue push never made (push:0: the
 *     journal is written, nothing pushed). Every call counts, refused ones
 *     (too long) included.
 *   node gather-crash-child.js import STATE sync
 *     importPlans(STATE) killed when it syncs the queue: every line pushed,
 *     the plan and the journal still there.
 *   node gather-crash-child.js store-arc STATE N [SYNC [ARC_MAX]]
 *     GatherStore: N puts with an ARC record (queue ref slot 1, seq i), a
 *     sync() after the first SYNC of them if given (0: none), then a put
 *     whose ARC record is written and whose bucket append is killed. ARC_MAX
 *     is gatherer.arc_max_size (default 100 MB; 1 rolls before every record).
 *   node gather-crash-child.js store-after STATE N [SYNC [ARC_MAX]]
 *     The same, but the last put (slot 2, seq 5, retry) is killed inside its
 *     `after` callback: its bucket is appended, its queue done() never ran.
 *
 * A child that is not killed exits with 3. Imported (by the tests, for
 * crashInput), it runs nothing.
 */

import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BucketObject } from '../../common/bucket/bucket.js';
import { GatherQueue } from '../../common/gather/queue-file.js';
import { importPlans } from '../../gatherer/plan-import.js';
import { GatherStore, type StoreInput } from '../../gatherer/store.js';

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('still running after SIGKILL');
}

/** The i-th object the store children put (the tests recognise it by its URL). */
export function crashInput(i: number, from: { slot: number; seq: number; retry?: boolean }): StoreInput {
  const url = `http://a.example/page/${i}`;
  const content = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>${i}</title>${'x'.repeat(100 + i * 37)}`);
  return {
    header: new BucketObject().add('U', url).add('H', '200'),
    body: new BucketObject().add('X', `page ${i}`),
    arc: { url, ip: '93.184.216.34', date: new Date(Date.UTC(2024, 0, 1, 0, 0, i)), contentType: 'text/html', content },
    from,
  };
}

async function main(): Promise<void> {
  const [mode, state, arg, syncText, arcMaxText] = process.argv.slice(2);
  if (state === undefined || arg === undefined) {
    process.stderr.write('usage: gather-crash-child import|store-arc|store-after STATE ARG [SYNC [ARC_MAX]]\n');
    process.exit(2);
  }
  if (mode === 'import') {
    const queue = GatherQueue.open(state);
    if (arg === 'sync') {
      GatherQueue.prototype.syncInBackground = () => die();
    } else {
      const killAt = Number(/^push:(\d+)$/.exec(arg)?.[1] ?? NaN);
      if (!Number.isInteger(killAt)) process.exit(2);
      const push = GatherQueue.prototype.push;
      let calls = 0;
      GatherQueue.prototype.push = function (this: GatherQueue, ...args: Parameters<GatherQueue['push']>): number {
        if (calls === killAt) die();
        calls += 1;
        return push.apply(this, args);
      };
    }
    await importPlans(state, queue);
    process.exit(3);
  } else if (mode === 'store-arc' || mode === 'store-after') {
    const n = Number(arg);
    const syncAfter = syncText === undefined ? undefined : Number(syncText);
    const store = await GatherStore.open(state, { arcMaxSize: arcMaxText === undefined ? 100_000_000 : Number(arcMaxText) });
    for (let i = 0; i < n; i++) {
      await store.put(crashInput(i, { slot: 1, seq: i }));
      if (syncAfter === i + 1) await store.sync(() => {});
    }
    if (mode === 'store-arc') {
      store.buckets.append = () => die();
      await store.put(crashInput(n, { slot: 1, seq: n }));
    } else {
      await store.put(crashInput(n, { slot: 2, seq: 5, retry: true }), () => die());
    }
    process.exit(3);
  } else {
    process.exit(2);
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
