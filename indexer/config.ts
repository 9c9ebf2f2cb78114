/**
 * The [indexer] table of sherlock.toml: parallelism and memory.
 */

import { z } from 'zod';
import { size } from '../common/config.js';

export const indexerConfig = z
  .object({
    /** Worker threads for the chewing stages; "auto" uses every core. */
    workers: z.union([z.literal('auto'), z.number().int().min(1).max(256)]).default('auto'),
    /** Memory the external sorts may hold before spilling runs to disk. */
    memory_budget: size({ min: '16MiB' }).prefault('1GiB'),
  })
  .strict();

export type IndexerConfig = z.output<typeof indexerConfig>;
