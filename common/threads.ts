/**
 * How many worker threads a part starts when left to choose: the cores but
 * one, which the main thread (sockets, writing, merging) and the appliance's
 * other daemons need; at least one.
 */

import { availableParallelism } from 'node:os';

export function coresButOne(most = Infinity): number {
  return Math.max(1, Math.min(most, availableParallelism() - 1));
}
