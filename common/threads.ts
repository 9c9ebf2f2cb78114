/**
 * How many worker threads a part starts when left to choose: the cores but
 * one, which the main thread (sockets, writing, merging) and the appliance's
 * other daemons need; at least one. A batch job whose main thread only
 * writes what its threads make (the Nutch export) takes every core.
 */

import { availableParallelism } from 'node:os';

export function coresButOne(most = Infinity): number {
  return Math.max(1, Math.min(most, availableParallelism() - 1));
}

export function everyCore(most = Infinity): number {
  return Math.max(1, Math.min(most, availableParallelism()));
}
