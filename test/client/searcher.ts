/**
 * A real searcher for the client's tests: the indexer tests' site crawled
 * and built once per test file (useIndex) into a scratch state directory, served by SearchServer
 * with the real index engine on 127.0.6.x. `serve` can take the port of a
 * searcher closed before, as a restarted searcher does.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, type TestContext } from 'node:test';
import { WebSocket } from 'undici';
import { SherlockClient, type ClientOptions, type StatusData } from '../../client/sherlock-client.js';
import { searcherConfig } from '../../searcher/config.js';
import { IndexEngine } from '../../searcher/index-engine.js';
import { SearchServer } from '../../searcher/server.js';
import { buildCli, crawlSite } from '../indexer/site.js';

export const HOST = '127.0.6.11';

let built: IndexEngine | undefined;

/** Builds the site's index before the file's tests and closes it after them; call at the top of a test file. */
export function useIndex(): void {
  const state = mkdtempSync(join(tmpdir(), 'sherlock-client-'));
  before(async () => {
    await crawlSite(state, { address: '127.0.6.10' });
    await buildCli(state);
    built = await IndexEngine.start({ state, pollMs: 0 });
  });
  after(() => {
    built?.close();
    rmSync(state, { recursive: true, force: true });
  });
}

function engine(): IndexEngine {
  if (built === undefined) throw new Error('useIndex() was not called at the top of the test file');
  return built;
}

/** A searcher with [searcher] `overrides` on HOST:`port` (0: a free one), closed when the test ends. */
export async function serve(t: TestContext, overrides: Record<string, unknown> = {}, token?: string, port = 0): Promise<SearchServer> {
  const config = searcherConfig.parse({ listen: `${HOST}:${port}`, ...overrides });
  const server = await SearchServer.listen({ config, engine: engine(), token });
  t.after(() => server.close());
  return server;
}

/** A client of `server` on undici's WebSocket (Node 20 has no global one), closed when the test ends. */
export function clientOf(t: TestContext, server: SearchServer, options: ClientOptions = {}): SherlockClient {
  const client = new SherlockClient(`ws://${server.address}/`, { WebSocket, ...options });
  t.after(() => client.close());
  return client;
}

/** The next status event the client gets. */
export function nextStatus(client: SherlockClient): Promise<StatusData> {
  return new Promise((resolve) => {
    const off = client.subscribeStatus((data) => {
      off();
      resolve(data);
    });
  });
}

export interface Figures {
  searches: number;
  rate_limited: number;
  answers: Record<string, number>;
}

/** The searcher's figures now, from a client of its own (subscribing answers with an event at once). */
export async function figures(t: TestContext, server: SearchServer, options: ClientOptions = {}): Promise<Figures> {
  return (await nextStatus(clientOf(t, server, options))) as unknown as Figures;
}
