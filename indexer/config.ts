/**
 * The [indexer] table of sherlock.toml: parallelism, memory, and how long
 * old index versions stay.
 */

import { z } from 'zod';
import { duration, size } from '../common/config.js';

export const indexerConfig = z
  .object({
    /** Worker threads for the chewing stage; "auto" uses every core. */
    workers: z.union([z.literal('auto'), z.number().int().min(1).max(256)]).default('auto'),
    /**
     * Memory the sort of the postings may hold before spilling sorted runs to
     * disk (docs/indexer.md "Build"). Budgets below a few MiB only make many
     * small runs: the tests use them to prove the output does not change.
     */
    memory_budget: size({ min: '64KiB' }).prefault('1GiB'),
    /** How long a version that is neither current nor the previous one is kept after it was replaced. */
    grace_period: duration().prefault('1h'),
  })
  .strict();

export type IndexerConfig = z.output<typeof indexerConfig>;
