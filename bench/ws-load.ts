/**
 * The query set over WebSocket, against any server speaking sherlock.v1: start
 * the server as a child process on loopback, wait for its /healthz, run the
 * bench client (sherlock-ws-client.ts) against it, then, for sherlock's
 * searcher, the same load over its JSON API (sherlock-http-client.ts), stop
 * the server. sherlock's
 * searcher and the bare floor server (peers/bare-ws-server.ts) go through the
 * same steps, so their rows differ by the server alone.
 */

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { check, run, trackChild, untrackChild } from './measure.js';
import type { BenchContext } from './parts.js';

/** Ports beside the site's (`--port`): the searcher's, and the floor's, apart so a searcher still stopping cannot hold it. */
export const SEARCHER_PORT_OFFSET = 1;
export const FLOOR_PORT_OFFSET = 2;

/** The load of the concurrent measurement: sockets, and queries in flight on each (at most searcher.max_in_flight). */
export const WS_CLIENTS = 16;
export const WS_DEPTH = 2;

export interface WsOut {
  latenciesMs: number[];
  zeroHits: number;
  errors: number;
  /** The queries answered with an error in the first pass, and its code. */
  refused: Array<{ q: string; code: string | undefined }>;
  top: string[][];
  concurrent: { clients: number; depth: number; seconds: number; latenciesMs: number[] };
}

/** The JSON API's figures (sherlock-http-client.ts), in the shape of the socket's. */
export interface HttpOut {
  latenciesMs: number[];
  errors: number;
  concurrent: WsOut['concurrent'];
}

/** Resolves at the first 200 of `url`, polled every 50 ms. */
export function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const req = get(url, (res) => {
        res.resume();
        if (res.statusCode === 200) resolve();
        else retry();
      });
      req.on('error', retry);
      req.setTimeout(2000, () => req.destroy());
    };
    const retry = (): void => {
      if (Date.now() > deadline) reject(new Error(`server not healthy at ${url} within ${timeoutMs / 1000} s`));
      else setTimeout(attempt, 50);
    };
    attempt();
  });
}

function vmHwm(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * Runs `node SERVER_ARGS…` (a server listening on 127.0.0.1:port), then the
 * client with the bench's passes; `record`: where the client writes each
 * query's answer text from its first pass. Errors carry the server's last
 * lines of stderr; an error answer to a query is one too, unless
 * `allowRefused` (the relevance table counts a refused query as one
 * without hits). `overHttp`: the same passes over GET /api/search afterwards,
 * against the same server.
 */
export async function queriesOverWebSocket(
  ctx: BenchContext,
  what: string,
  serverArgs: readonly string[],
  port: number,
  record?: string,
  allowRefused = false,
  overHttp = false,
): Promise<{ out: WsOut; http?: HttpOut; peakRss: number | undefined; startupMs: number }> {
  const spawned = performance.now();
  const child = spawn(process.execPath, serverArgs, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  if (child.pid === undefined) throw new Error(`${what} did not start`);
  const pid = child.pid;
  trackChild(pid);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  try {
    await waitHealthy(`http://127.0.0.1:${port}/healthz`, 60_000);
    // Spawn to the first 200 of /healthz, which answers 200 once an index is loaded (50 ms polls).
    const startupMs = performance.now() - spawned;
    const r = check(
      `WebSocket client of ${what}`,
      await run(
        process.execPath,
        [
          '--experimental-websocket',
          join(ctx.distDir, 'sherlock-ws-client.js'),
          `ws://127.0.0.1:${port}/`,
          ctx.queryFile,
          String(ctx.opts.passes),
          String(ctx.opts.warmup),
          String(WS_CLIENTS),
          String(WS_DEPTH),
          ...(record === undefined ? [] : [record]),
        ],
        // keepOutput: the one JSON line carries every query's top-10 URLs.
        { timeoutMs: 1_800_000, measureRss: false, keepOutput: 64 << 20 },
      ),
    );
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as WsOut;
    if (out.errors > 0 && !(allowRefused && out.errors === out.refused.length)) {
      throw new Error(`${out.errors} queries answered with an error${out.refused.length > 0 ? `, e.g. ${JSON.stringify(out.refused[0])}` : ''}`);
    }
    const http = overHttp ? await queriesOverHttp(ctx, what, port) : undefined;
    return { out, ...(http === undefined ? {} : { http }), peakRss: vmHwm(pid), startupMs };
  } catch (err) {
    throw new Error(`${String(err)}${stderr === '' ? '' : `\n${what} stderr: ` + stderr.trim().split('\n').slice(-3).join(' / ')}`);
  } finally {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // gone
    }
    untrackChild(pid);
  }
}

/** The bench's passes over GET /api/search of the server on `port`, at the socket's load. */
async function queriesOverHttp(ctx: BenchContext, what: string, port: number): Promise<HttpOut> {
  const args = [join(ctx.distDir, 'sherlock-http-client.js'), `http://127.0.0.1:${port}`, ctx.queryFile, String(ctx.opts.passes), String(ctx.opts.warmup), String(WS_CLIENTS), String(WS_DEPTH)];
  const r = check(`HTTP client of ${what}`, await run(process.execPath, args, { timeoutMs: 1_800_000, measureRss: false, keepOutput: 64 << 20 }));
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as HttpOut;
  if (out.errors > 0) throw new Error(`${out.errors} queries over /api/search answered with an error`);
  return out;
}

/** Where sherlock's run leaves its answers for the floor server to repeat. */
export function answersFile(ctx: BenchContext): string {
  return join(ctx.workDir, 'searcher-answers.jsonl');
}
