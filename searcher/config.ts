/**
 * The [searcher] table of sherlock.toml: where it listens and who may ask.
 */

import { z } from 'zod';

export const searcherConfig = z
  .object({
    /** HOST:PORT for the WebSocket API, the search page and /metrics. */
    listen: z
      .string()
      .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'expected HOST:PORT such as "127.0.0.1:8080"')
      .default('127.0.0.1:8080'),
    /** File holding the bearer token clients must send; empty means no token is asked for. */
    token_file: z.string().default(''),
  })
  .strict();

export type SearcherConfig = z.output<typeof searcherConfig>;
