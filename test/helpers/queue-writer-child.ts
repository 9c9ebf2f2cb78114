/**
 * A queue writer to be killed: run as `node queue-writer-child.js STATE SEED`.
 *
 * It opens the gather queue in STATE (recovering what the last victim left),
 * makes hosts h0 … h7, then until killed picks a host at random and either
 * pushes queueEntry(slot, seq) or takes the head (checking it is the entry
 * its seq names) and calls done(). Before each operation it prints
 * `try push|done SLOT`, after it `ack push|done SLOT SEQ`. Lines go out with
 * a write(2) each (process.stdout may buffer a pipe in memory, and a kill loses
 * what it holds), so the parent reads every line printed before the kill: an
 * `ack` has returned, and only the operation after the last `try` can be half
 * done.
 */

import { writeSync } from 'node:fs';
import { GatherQueue } from '../../common/gather/queue-file.js';
import { random } from './bucket-payload.js';
import { QUEUE_CHILD_HOSTS, queueEntry } from './queue-entries.js';

const [state, seedText] = process.argv.slice(2);
if (state === undefined || seedText === undefined) {
  process.stderr.write('usage: queue-writer-child STATE SEED\n');
  process.exit(2);
}
function say(line: string): void {
  writeSync(1, line);
}

const pick = random(Number(seedText));
const queue = GatherQueue.open(state);
const hosts = Array.from({ length: QUEUE_CHILD_HOSTS }, (_, i) => queue.host('http', 80, `h${i}.example`));
say('ready\n');
// A child nobody kills must not run forever.
const deadline = Date.now() + 20_000;

while (Date.now() < deadline) {
  const host = hosts[Math.floor(pick() * hosts.length)]!;
  if (pick() < 0.5 || queue.length(host) === 0) {
    say(`try push ${host.slot}\n`);
    const seq = queue.get(host).pushed;
    const { rest, priority } = queueEntry(host.slot, seq);
    const pushed = queue.push(host, rest, priority);
    say(`ack push ${host.slot} ${pushed}\n`);
  } else {
    say(`try done ${host.slot}\n`);
    const entry = queue.take(host)!;
    const expected = queueEntry(host.slot, entry.seq);
    if (entry.rest !== expected.rest || entry.priority !== expected.priority) {
      process.stderr.write(`host ${host.slot}: entry ${entry.seq} is not what was pushed\n`);
      process.exit(4);
    }
    queue.done(host, entry.seq);
    say(`ack done ${host.slot} ${entry.seq}\n`);
  }
}
process.exit(3);
