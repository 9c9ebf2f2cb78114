/**
 * The [indexer] table of sherlock.toml: parallelism, memory, how long old
 * index versions stay, when two cards are near-duplicates, and when the
 * daemon (`sherlock indexer run`) builds a new version.
 */

import { z } from 'zod';
import { duration, size } from '../common/config.js';
import { adminListen } from '../common/service/metrics-listener.js';

export const indexerConfig = z
  .object({
    /** Worker threads for the chewing stage; "auto" uses every core. */
    workers: z.union([z.literal('auto'), z.number().int().min(1).max(256)]).default('auto'),
    /**
     * Memory a build may hold in all (docs/indexer.md "Memory"): Node's own
     * and its workers' baselines come off first (build.ts sharedBudget),
     * the rest holds the workers' spelling tables, the vocabulary (spilled
     * in segments past a quarter), the per-card facts, and the sorts of the
     * postings and the anchor refs, which spill runs to disk. Budgets below
     * a few MiB only make many small runs: the tests use them to prove the
     * output does not change.
     */
    memory_budget: size({ min: '64KiB' }).prefault('1GiB'),
    /** How long a version that is neither current nor the previous one is kept after it was replaced. */
    grace_period: duration().prefault('1h'),
    /** Min-hashes per card (signatures.ts): more find near-duplicates more surely and cost more chewing. */
    signatures: z.number().int().min(16).max(128).default(32),
    /** Words per shingle: the rolling hash covers this many consecutive words. */
    shingle_words: z.number().int().min(1).max(16).default(4),
    /** Two cards are near-duplicates when at least this many of their min-hashes are equal. */
    signature_threshold: z.number().int().min(1).max(128).default(24),
    /** The daemon builds a new version once this many buckets were stored since the current one was built… */
    rebuild_documents: z.number().int().min(1).default(10000),
    /** …or once the current one is this old and at least one bucket came since. */
    rebuild_interval: duration().prefault('1h'),
    /** How often the daemon looks at the bucket file. */
    poll_interval: duration({ min: '100ms' }).prefault('10s'),
    /** Loopback HOST:PORT serving /metrics for `indexer run`; "" serves none. */
    admin_listen: adminListen(),
  })
  .refine((c) => c.signature_threshold <= c.signatures, { message: 'signature_threshold must not exceed signatures', path: ['signature_threshold'] })
  .strict();

export type IndexerConfig = z.output<typeof indexerConfig>;
