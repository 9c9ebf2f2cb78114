/**
 * Parsing off the main thread: a piscina pool of worker threads running
 * parse-worker.ts, so that the thread driving requests is never stuck behind
 * an HTML parse (politeness delays are short; a busy main thread would make
 * every address wait longer than it must). With 0 workers, parsing runs
 * inline, as in `sherlock check fetch`.
 *
 * What crosses the thread boundary is plain data (structured clone): the
 * response body in, the deflated bucket body out. The response body is
 * copied, not transferred: it may share its ArrayBuffer with Node's pool.
 */

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { ParsedDocument } from './parse.js';
import { parseToBody, type ParseResult, type ParseTask } from './parse-worker.js';

/** Worker threads for `gatherer.parse_workers = "auto"`: the cores but one (the main thread's), at least one, at most four. */
export function autoParseWorkers(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

export class ParsePool {
  private readonly pool: Piscina | undefined;

  constructor(workers: number) {
    this.pool =
      workers === 0
        ? undefined
        : new Piscina({ filename: new URL('./parse-worker.js', import.meta.url).href, minThreads: workers, maxThreads: workers, idleTimeout: 60_000 });
  }

  /** The document's kind, charset and deflated bucket body (store.ts takes it as is). */
  async parse(task: ParseTask): Promise<{ kind: ParsedDocument['kind']; charset?: string; body: Buffer }> {
    const result = this.pool === undefined ? await parseToBody(task) : ((await this.pool.run(task)) as ParseResult);
    const body = Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength);
    return { kind: result.kind, ...(result.charset === undefined ? {} : { charset: result.charset }), body };
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
  }
}
