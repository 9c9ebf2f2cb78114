/**
 * The [gatherer] table of sherlock.toml: politeness, limits and archive settings.
 * Defaults live here; `etc/sherlock.toml` documents them and a test checks both agree.
 */

import { z } from 'zod';
import { duration, size } from '../common/config.js';

export const gathererConfig = z
  .object({
    /** Sent on every request; must name the operator's contact page (RFC 9309 §2.2.1 matches its first token). */
    user_agent: z.string().min(1).default('sherlock/0.1 (+https://sherlock.invalid/bot)'),
    /** Minimum pause between two requests to one IP address. */
    min_delay: duration().prefault('5s'),
    /** Highest robots.txt Crawl-delay honoured; a longer one is capped to this. */
    max_crawl_delay: duration().prefault('60s'),
    /** Open connections over all hosts at once. */
    max_connections: z.number().int().min(1).max(10_000).default(32),
    /** Loopback and private ranges are refused unless this is true (tests and intranets). */
    allow_private_addresses: z.boolean().default(false),
    /** Bodies longer than this are cut and the object marked truncated. */
    max_body_size: size({ min: '1KiB', max: '1GiB' }).prefault('10MiB'),
    /** An ARC file is closed and a new one begun once it reaches this size. */
    arc_max_size: size({ min: '1MiB' }).prefault('100MB'),
  })
  .strict();

export type GathererConfig = z.output<typeof gathererConfig>;
