/**
 * Deterministic queue entries for the queue tests: a writer in a child process
 * and the parent checking its work derive the same rest and priority from
 * (host slot, seq). About a quarter are long (1000 to MAX_REST_LENGTH bytes),
 * so pages fill after one or two entries and are allocated and freed often.
 */

import { GatherQueue, MAX_REST_LENGTH } from '../../common/gather/queue-file.js';
import { random } from './bucket-payload.js';

/** Hosts h0 … h7 of the crash child (queue-writer-child.ts). */
export const QUEUE_CHILD_HOSTS = 8;

export function queueEntry(slot: number, seq: number): { rest: string; priority: number } {
  const next = random(slot * 1_000_003 + seq);
  const long = next() < 0.25;
  const length = long ? 1000 + Math.floor(next() * (MAX_REST_LENGTH - 1000 + 1)) : 10 + Math.floor(next() * 190);
  const stem = `/h${slot}/${seq}/`;
  return { rest: stem + 'p'.repeat(Math.max(0, length - stem.length)), priority: Math.floor(next() * 0xffffffff) };
}

/** Runs `body` with the state's queue open, closing it after. */
export function withQueue<T>(state: string, body: (queue: GatherQueue) => T): T {
  const queue = GatherQueue.open(state);
  try {
    return body(queue);
  } finally {
    queue.close();
  }
}
