/**
 * The [shepherd] table of sherlock.toml: crawl scope and budgets.
 */

import { z } from 'zod';

export const shepherdConfig = z
  .object({
    /** Links further than this many hops from a seed are not followed. */
    max_depth: z.number().int().min(0).max(1000).default(16),
    /** Cap on URLs remembered per site (protocol, host, port). */
    max_urls_per_site: z.number().int().min(1).default(100_000),
    /** Which links are followed: same host as the seed, same registrable domain, or any. */
    scope: z.enum(['host', 'domain', 'any']).default('host'),
  })
  .strict();

export type ShepherdConfig = z.output<typeof shepherdConfig>;
