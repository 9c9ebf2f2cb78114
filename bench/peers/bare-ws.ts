/**
 * The bare WebSocket server (bare-ws-server.ts) as a row of the searching
 * table: the query set through the same client and steps as sherlock's
 * searcher, answered with the searcher's own recorded answers. It runs after
 * sherlock's searcher, whose first pass recorded them.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, SearchResult } from '../parts.js';
import { answersFile, FLOOR_PORT_OFFSET, queriesOverWebSocket, WS_CLIENTS, WS_DEPTH } from '../ws-load.js';

export const bareWs = {
  name: 'bare ws server, recorded answers (a floor)',
  how:
    'bare ws server (bench/peers/bare-ws-server.ts): ws with the searcher\'s socket options answering each query with the answer sherlock\'s searcher gave it ' +
    `(recorded in the client's first pass, same sizes), no searching; the same client, passes and ${WS_CLIENTS}×${WS_DEPTH} load as sherlock's row. ` +
    'It bounds what any searcher in Node.js reaches over WebSocket with this client on this machine.',
  /** Throws when sherlock's searcher left no answers to repeat. */
  async search(ctx: BenchContext): Promise<SearchResult> {
    const answers = answersFile(ctx);
    if (!existsSync(answers)) throw new Error(`no recorded answers at ${answers}: sherlock's searcher did not run`);
    const port = ctx.opts.port + FLOOR_PORT_OFFSET;
    const { out, peakRss } = await queriesOverWebSocket(ctx, 'bare ws server', [join(ctx.distDir, 'peers', 'bare-ws-server.js'), answers, String(port)], port);
    return { latenciesMs: out.latenciesMs, zeroHits: out.zeroHits, peakRss, concurrent: out.concurrent };
  },
};
