/**
 * Parsing off the main thread: a piscina pool of worker threads running
 * parse-worker.ts, so that the thread driving requests is never stuck behind
 * an HTML parse or a gzip member (politeness delays are short; a busy main
 * thread would make every address wait longer than it must). With 0 workers,
 * the same steps run inline, as in `sherlock check fetch`.
 *
 * What crosses the thread boundary is plain data (structured clone): the ARC
 * content in (the body is a view into it, so it is copied once), the framed
 * ARC record and the deflated bucket body out. It is copied, not transferred:
 * a transfer would save a memcpy of a few kilobytes per page, far less than
 * the hand-over itself costs, and would leave the caller holding detached
 * buffers.
 */

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { coresButOne } from '../common/threads.js';
import type { GathererConfig } from './config.js';
import type { ParseRequest, PrepareResult, PrepareTask } from './parse-worker.js';

/** Worker threads for `gatherer.parse_workers = "auto"`: the cores but one (the main thread's), at least one, at most four. */
export function autoParseWorkers(): number {
  return coresButOne(4);
}

/** The worker threads `gatherer.parse_workers` asks for. */
export function parseWorkerCount(config: Pick<GathererConfig, 'parse_workers'>): number {
  return config.parse_workers === 'auto' ? autoParseWorkers() : config.parse_workers;
}

/**
 * The worker threads of an archive import (`sherlock import archive`):
 * parse_workers when set; for "auto", none on two cores or fewer. There the
 * import has no fetch loop to keep free, and a worker bought nothing: 35,011
 * records took 14.8 s with one, 15.0 s with none and 13.6 s with two, while
 * each worker holds its own language detector (80 MiB and more: 360 and
 * 580 MiB peak against 280; docs/decisions.md "Importing archives").
 */
export function importParseWorkers(config: Pick<GathererConfig, 'parse_workers'>): number {
  if (config.parse_workers !== 'auto') return config.parse_workers;
  return availableParallelism() <= 2 ? 0 : autoParseWorkers();
}

/** What prepare() gives: parse-worker.ts's result, the bucket body as a Buffer. */
export interface Prepared extends Omit<PrepareResult, 'parsed'> {
  parsed?: Omit<NonNullable<PrepareResult['parsed']>, 'body'> & { body: Buffer };
}

export class ParsePool {
  private readonly pool: Piscina | undefined;
  /**
   * The parser on this thread, loaded only when there are no workers: its
   * language detector's tables take about 100 MiB wherever they load, and
   * with workers the main thread never parses.
   */
  private inline: Promise<typeof import('./parse-worker.js')> | undefined;

  constructor(workers: number) {
    this.pool =
      workers === 0
        ? undefined
        : new Piscina({
            filename: new URL('./parse-worker.js', import.meta.url).href,
            minThreads: workers,
            maxThreads: workers,
            idleTimeout: 60_000,
            // Posted at once rather than queued here: a worker done with one task finds the next without
            // going to sleep, and a wake-up costs about as much as framing and parsing a small page.
            concurrentTasksPerWorker: 8,
          });
  }

  /** Frames, digests and (for a document) parses one response; see parse-worker.ts. */
  async prepare(task: PrepareTask): Promise<Prepared> {
    const result = this.pool === undefined ? await (await this.parser()).prepareResponse(task) : ((await this.pool.run(task)) as PrepareResult);
    const { parsed, ...rest } = result;
    return parsed === undefined ? rest : { ...rest, parsed: bufferBody(parsed) };
  }

  /** Parses one body only (parse-worker.ts parseInWorker): for a record archived already. `body` crosses whole, so give a view of no more than it. */
  async parse(body: Uint8Array, parse: ParseRequest): Promise<Omit<Prepared, 'arc' | 'md5'>> {
    const result: Pick<PrepareResult, 'parsed' | 'problem'> =
      this.pool === undefined
        ? await (await this.parser()).parseForBucket(Buffer.from(body.buffer, body.byteOffset, body.byteLength), parse)
        : await this.pool.run({ body, parse }, { name: 'parseInWorker' });
    const { parsed, ...rest } = result;
    return parsed === undefined ? rest : { ...rest, parsed: bufferBody(parsed) };
  }

  private parser(): Promise<typeof import('./parse-worker.js')> {
    return (this.inline ??= import('./parse-worker.js'));
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
  }
}

/** A Buffer again (a worker's comes back as a plain Uint8Array): store.ts tells bodies by Buffer.isBuffer. */
function bufferBody(parsed: NonNullable<PrepareResult['parsed']>): NonNullable<Prepared['parsed']> {
  return { ...parsed, body: Buffer.from(parsed.body.buffer, parsed.body.byteOffset, parsed.body.byteLength) };
}
