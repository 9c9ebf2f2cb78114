/**
 * The [shepherd] table of sherlock.toml: crawl scope and budgets.
 */

import { z } from 'zod';
import { duration, size } from '../common/config.js';
import { adminListen } from '../common/service/metrics-listener.js';
import { MAX_URL_LENGTH } from '../common/url.js';
import { hostPatternProblem, urlPatternProblem } from '../common/url-patterns.js';
import { paramNameProblem } from './scope-patterns.js';

export const shepherdConfig = z
  .object({
    /** Links further than this many hops from a seed are not followed. */
    max_depth: z.number().int().min(0).max(1000).default(16),
    /** Cap on URLs remembered per site (protocol, host, port). */
    max_urls_per_site: z.number().int().min(1).default(100_000),
    /** Which links are followed: same host as the seed, same registrable domain, or any. */
    scope: z.enum(['host', 'domain', 'any']).default('host'),
    /** Longer URLs (after normalising) are traps or garbage and are not taken; seeds included. */
    max_url_length: z.number().int().min(64).max(MAX_URL_LENGTH).default(1024),
    /** A link whose path holds one segment more than this many times (/a/b/a/b/a/b/a/b) is a trap. */
    max_path_repeats: z.number().int().min(1).max(1000).default(3),
    /** A link with more query parameters than this (after stripping) is a trap (endless facet combinations). */
    max_query_params: z.number().int().min(0).max(1000).default(12),
    /** Hosts in scope whatever `scope` says: "docs.example.org", or "*.example.net" for a domain and its subdomains. */
    allow: z
      .array(z.string())
      .superRefine((list, ctx) => problem(ctx, hostPatternProblem(list)))
      .default([]),
    /** Hosts never taken, seeds and allow included; same patterns as allow. */
    deny: z
      .array(z.string())
      .superRefine((list, ctx) => problem(ctx, hostPatternProblem(list)))
      .default([]),
    /** URLs never taken: JavaScript regular expressions, unanchored, tested against the normalised URL. */
    deny_patterns: z
      .array(z.string())
      .superRefine((list, ctx) => problem(ctx, urlPatternProblem(list)))
      .default([]),
    /** Query and `;path` parameters removed before a URL is judged or stored (session IDs, tracking); "name*" is a prefix. */
    strip_params: z
      .array(z.string())
      .superRefine((list, ctx) => problem(ctx, paramNameProblem(list)))
      .default(['jsessionid', 'phpsessid', 'sid', 'sessionid', 'session_id', 'aspsessionid*', 'cfid', 'cftoken', 'utm_*']),
    /** A page fetched for the first time is fetched again after this long. */
    initial_refetch: duration({ min: '1m' }).prefault('1d'),
    /** Bounds of the adaptive refetch interval (halved when a page changed, × 1.5 when it did not). */
    min_refetch: duration({ min: '1m' }).prefault('1h'),
    max_refetch: duration({ min: '1m' }).prefault('30d'),
    /** After a temporary error (the gatherer has retried already) the URL is planned again after this, doubling each time; a first 404 or 410 is checked again after this too. */
    retry_delay: duration({ min: '1s' }).prefault('1h'),
    /** Temporary errors in a row before the shepherd gives up until max_refetch. */
    max_retries: z.number().int().min(0).max(100).default(3),
    /** A URL handed to the gatherer whose result has not come back after this long is planned again. */
    requeue_after: duration({ min: '1m' }).prefault('7d'),
    /** How often `sherlock shepherd run` takes the inbox, merges what the gatherer stored and plans. */
    cycle_interval: duration({ min: '100ms', max: '1h' }).prefault('10s'),
    /** URLs planned per cycle at most (one plan file), and at most this many of one site. */
    plan_batch: z.number().int().min(1).max(1_000_000).default(20_000),
    plan_per_site: z.number().int().min(1).max(1_000_000).default(2_000),
    /** Memory SQLite may use to cache pages of the URL database. */
    db_cache: size({ min: '1MiB', max: '64GiB' }).prefault('128MiB'),
    /** Loopback HOST:PORT serving /metrics for `sherlock shepherd run`; "" serves none. Changes on restart. */
    admin_listen: adminListen(),
  })
  .strict();

export type ShepherdConfig = z.output<typeof shepherdConfig>;

/** Reports a list entry's problem (scope.ts describes it, naming the entry's index) as a zod issue. */
function problem(ctx: z.RefinementCtx, message: string | undefined): void {
  if (message !== undefined) ctx.addIssue({ code: 'custom', message });
}
