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
 *
 * PDFs and office files (document-type.ts needsDocumentWorker) go to a second pool whatever the
 * number of workers, one task per thread, each under the caps of
 * DocumentLimits: a parse that runs past `time` has its worker stopped and
 * the document is `unparseable`. Memory is watched twice, because pdf.js
 * keeps a decoded stream in an ArrayBuffer, which no heap limit counts: the
 * worker looks at its own isolate's heap and ArrayBuffers every
 * MEMORY_WATCH_MS and leaves (MEMORY_EXIT) past `memory`; and since a
 * stream inflated in one synchronous loop gives the worker no turn to look,
 * this thread stops it when the whole process has grown by more than
 * `memory` for each document thread plus WORKER_START since the task
 * began (a process figure, so it cannot tell whose growth it is, only that
 * it is too much). Its heap is capped at `memory` too (resourceLimits).
 * Either way the document is recorded `too_large`. A stopped worker is
 * replaced by a fresh one; the crawl goes on. The pool's threads leave when
 * idle, so a crawl without PDFs holds none.
 */

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { BucketObject, deflatedBody } from '../common/bucket/bucket.js';
import { logger } from '../common/log.js';
import { coresButOne } from '../common/threads.js';
import type { GathererConfig } from './config.js';
import { contentType } from './content-type.js';
import { headerValue } from './document.js';
import { needsDocumentWorker } from './document-type.js';
import type { Refusal } from './parse.js';
import type { DocumentWorkerData, ParseRequest, PrepareResult, PrepareTask } from './parse-worker.js';

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

/** The caps `gatherer.document_parse_time` and `document_parse_memory` set. */
export function documentLimits(config: Pick<GathererConfig, 'document_parse_time' | 'document_parse_memory'>): DocumentLimits {
  return { time: config.document_parse_time, memory: config.document_parse_memory };
}

/** What prepare() gives: parse-worker.ts's result, the bucket body as a Buffer. */
export interface Prepared extends Omit<PrepareResult, 'parsed'> {
  parsed?: Omit<NonNullable<PrepareResult['parsed']>, 'body'> & { body: Buffer };
}

/** The caps on one PDF's or office file's parse. */
export interface DocumentLimits {
  /** ms */
  time: number;
  /** bytes */
  memory: number;
}

/**
 * A parse worker's young generation, MiB: V8's default let the medium crawl's
 * peak RSS reach 500–530 MB, capped here it stayed at 470–475 with no
 * processor time lost that the crawl could measure (as the indexer's chew
 * workers, indexer/chew.ts).
 */
const PARSE_WORKER_YOUNG_MIB = 16;

/** How often memory is looked at while a document is parsed. */
const MEMORY_WATCH_MS = 50;
/** The exit code of a document worker leaving over its memory cap (parse-worker.ts). */
const MEMORY_EXIT = 75;
/** What starting a document worker adds to the process (pdf.js, its CMaps, the language detector's tables). */
const WORKER_START = 256 * 2 ** 20;

const log = logger('gatherer');

export class ParsePool {
  private readonly pool: Piscina | undefined;
  /** PDFs' pool, made on the first one, and its free threads (tasks wait here, not in piscina, so that their time starts when they do). */
  private documents: Piscina | undefined;
  private readonly documentThreads: number;
  private documentsFree: number;
  private readonly documentsWaiting: Array<() => void> = [];
  /**
   * The parser on this thread, loaded only when there are no workers: its
   * language detector's tables take about 100 MiB wherever they load, and
   * with workers the main thread never parses.
   */
  private inline: Promise<typeof import('./parse-worker.js')> | undefined;

  constructor(
    workers: number,
    private readonly limits: DocumentLimits,
  ) {
    this.documentThreads = Math.max(1, workers);
    this.documentsFree = this.documentThreads;
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
            resourceLimits: { maxYoungGenerationSizeMb: PARSE_WORKER_YOUNG_MIB },
          }).on('error', workerLost);
  }

  /** Frames, digests and (for a document) parses one response; see parse-worker.ts. */
  async prepare(task: PrepareTask): Promise<Prepared> {
    if (task.parse !== undefined && needsCap(task.parse, task.body)) {
      const capped = await this.capped<PrepareResult>(task, 'default');
      if (!isRefusal(capped)) return prepared(capped);
      const { parse: _, ...unparsed } = task;
      return { ...(await this.prepare(unparsed)), parsed: refusedBody(capped) };
    }
    const result = this.pool === undefined ? await (await this.parser()).prepareResponse(task) : ((await this.pool.run(task)) as PrepareResult);
    return prepared(result);
  }

  /** Parses one body only (parse-worker.ts parseInWorker): for a record archived already. `body` crosses whole, so give a view of no more than it. */
  async parse(body: Uint8Array, parse: ParseRequest): Promise<Omit<Prepared, 'arc' | 'md5'>> {
    if (needsCap(parse, body)) {
      const capped = await this.capped<Pick<PrepareResult, 'parsed' | 'problem'>>({ body, parse }, 'parseInWorker');
      return isRefusal(capped) ? { parsed: refusedBody(capped) } : prepared(capped);
    }
    const result: Pick<PrepareResult, 'parsed' | 'problem'> =
      this.pool === undefined
        ? await (await this.parser()).parseForBucket(Buffer.from(body.buffer, body.byteOffset, body.byteLength), parse)
        : await this.pool.run({ body, parse }, { name: 'parseInWorker' });
    return prepared(result);
  }

  /** Runs a task in the documents' pool under the caps; what the worker gives, or why it was stopped. */
  private async capped<T>(task: unknown, name: string): Promise<T | Refusal> {
    await this.documentThread();
    const controller = new AbortController();
    const stop = (refusal: Refusal): void => controller.abort(refusal);
    const timer = setTimeout(() => stop({ outcome: 'unparseable', message: `parse went over its time cap of ${this.limits.time / 1000} s` }), this.limits.time);
    const overMemory: Refusal = { outcome: 'too_large', message: `parse went over its memory cap of ${mib(this.limits.memory)} MiB` };
    const before = process.memoryUsage.rss();
    const backstop = this.limits.memory * this.documentThreads + WORKER_START;
    const watch = setInterval(() => {
      if (process.memoryUsage.rss() - before > backstop) stop(overMemory);
    }, MEMORY_WATCH_MS);
    try {
      return (await this.documentPool().run(task, { name, signal: controller.signal })) as T;
    } catch (err) {
      if (controller.signal.aborted) return controller.signal.reason as Refusal;
      // piscina's words for a worker that left by itself, here by parse-worker.ts's memory watch.
      if ((err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY' || (err instanceof Error && err.message === `worker exited with code: ${MEMORY_EXIT}`)) return overMemory;
      return { outcome: 'unparseable', message: `parse failed: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      clearTimeout(timer);
      clearInterval(watch);
      const next = this.documentsWaiting.shift();
      if (next === undefined) this.documentsFree += 1;
      else next();
    }
  }

  private documentThread(): Promise<void> {
    if (this.documentsFree > 0) {
      this.documentsFree -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.documentsWaiting.push(resolve));
  }

  private documentPool(): Piscina {
    return (this.documents ??= new Piscina({
      filename: new URL('./parse-worker.js', import.meta.url).href,
      minThreads: 0,
      maxThreads: this.documentThreads,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: mib(this.limits.memory) },
      workerData: { memoryCap: this.limits.memory, memoryExit: MEMORY_EXIT, everyMs: MEMORY_WATCH_MS } satisfies DocumentWorkerData,
    }).on('error', workerLost));
  }

  private parser(): Promise<typeof import('./parse-worker.js')> {
    return (this.inline ??= import('./parse-worker.js'));
  }

  async close(): Promise<void> {
    await Promise.all([this.pool?.destroy(), this.documents?.destroy()]);
  }
}

/**
 * A worker that dies holding no task (idle, or while it starts: a memory cap
 * too small for its modules) is piscina's 'error' event, which unheard would
 * end the process. Its waiting tasks go to a new worker or meet their caps.
 */
function workerLost(err: unknown): void {
  log.err('a parse worker died', { problem: err instanceof Error ? err.message : String(err) });
}

function mib(bytes: number): number {
  return Math.max(1, Math.round(bytes / 2 ** 20));
}

function needsCap(parse: ParseRequest, body: Uint8Array): boolean {
  return needsDocumentWorker(contentType(headerValue(parse.headers, 'content-type')).mime, body);
}

function isRefusal(result: object): result is Refusal {
  return 'outcome' in result;
}

/** A worker's result with its body as a Buffer. */
function prepared<T extends Pick<PrepareResult, 'parsed'>>(result: T): Omit<T, 'parsed'> & Pick<Prepared, 'parsed'> {
  const { parsed, ...rest } = result;
  return parsed === undefined ? rest : { ...rest, parsed: bufferBody(parsed) };
}

/** The parse result of a document stopped at a cap: nothing but why. */
function refusedBody(refused: Refusal): NonNullable<Prepared['parsed']> {
  return { kind: 'other', body: deflatedBody(new BucketObject()), refused };
}

/** A Buffer again (a worker's comes back as a plain Uint8Array): store.ts tells bodies by Buffer.isBuffer. */
function bufferBody(parsed: NonNullable<PrepareResult['parsed']>): NonNullable<Prepared['parsed']> {
  return { ...parsed, body: Buffer.from(parsed.body.buffer, parsed.body.byteOffset, parsed.body.byteLength) };
}
