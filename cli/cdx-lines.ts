/**
 * The CDX or CDXJ lines of many ARC files for `export cdx`, one worker thread
 * per file when there are several files and cores (cli/cdx-worker.ts), inline
 * otherwise. Reading, inflating, digesting and SURT keys are nearly all of the
 * export's CPU time (docs/benchmarks.md), and the files are independent; the
 * caller's thread keeps only the sort. Lines come in batches of about 64 KiB
 * (one string, lines ended by LF) in no fixed order across files, which the
 * byte sort makes irrelevant. A worker waits while IN_FLIGHT of its batches
 * are untaken, so a sort busy spilling a run does not let batches pile up
 * (without that, 1,000,000 records over 6 files peaked at 389 MB RSS).
 *
 * Errors keep their SherlockError code and place across the thread boundary;
 * the first one stops every worker. In lenient mode each problem is reported
 * as it comes (so problems of different files may interleave).
 */

import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { Worker } from 'node:worker_threads';
import { readArc } from '../common/arc-read.js';
import { cdxFields, formatCdx, formatCdxj } from '../common/cdx.js';
import { SherlockError, type ErrorCode, type ErrorPlace } from '../common/errors.js';

export type CdxFormat = 'cdx' | 'cdxj';

export interface CdxJob {
  path: string;
  format: CdxFormat;
  lenient: boolean;
  /** Workers only: [0] counts the batches the parent has taken (an Int32Array over a SharedArrayBuffer). */
  taken?: Int32Array;
}

/** Batches a worker may have posted and the parent not yet taken: what bounds memory when the sort falls behind. */
export const IN_FLIGHT = 8;

/** A SherlockError as it crosses a thread boundary. */
export interface ErrorMessage {
  code: ErrorCode;
  message: string;
  place: ErrorPlace;
}

export type CdxMessage = { kind: 'lines'; text: string } | { kind: 'problem'; problem: ErrorMessage } | { kind: 'failed'; error: ErrorMessage | string };

// Under V8's largest regular object (128 KiB): larger strings go to large-object space, freed only by full collections.
const BATCH = 64 * 1024;

/** Reads one ARC file, handing each line (without LF) to `add`; lenient problems go to `onProblem`. */
export function cdxLinesOfFile(job: CdxJob, add: (line: string) => void, onProblem: (problem: SherlockError) => void): void {
  const name = basename(job.path);
  const format = job.format === 'cdxj' ? formatCdxj : formatCdx;
  for (const record of readArc(job.path, job.lenient ? { onProblem } : {})) {
    const fields = cdxFields(record, name);
    if (fields !== undefined) add(format(fields));
  }
}

/** Collects lines into LF-ended batches of about 64 KiB for posting. */
export function batching(emit: (text: string) => void): { add: (line: string) => void; flush: () => void } {
  let lines: string[] = [];
  let held = 0;
  const flush = (): void => {
    if (lines.length > 0) emit(lines.join('\n') + '\n');
    lines = [];
    held = 0;
  };
  return {
    add(line) {
      lines.push(line);
      held += line.length + 1;
      if (held >= BATCH) flush();
    },
    flush,
  };
}

export function errorMessage(err: SherlockError): ErrorMessage {
  return { code: err.code, message: err.message, place: err.place };
}

const revive = (error: ErrorMessage | string): Error =>
  typeof error === 'string' ? new Error(error) : new SherlockError(error.code, error.message, error.place);

/** Every line of every file to `add`, problems (lenient mode) to `onProblem`. */
export async function cdxLines(
  files: string[],
  options: { format: CdxFormat; lenient: boolean },
  add: (line: string) => void,
  onProblem: (problem: SherlockError) => void,
): Promise<void> {
  const addBatch = (text: string): void => {
    for (let at = 0, lf = text.indexOf('\n'); lf !== -1; at = lf + 1, lf = text.indexOf('\n', at)) add(text.slice(at, lf));
  };
  const threads = Math.min(files.length, availableParallelism());
  if (threads <= 1) {
    for (const path of files) cdxLinesOfFile({ path, ...options }, add, onProblem);
    return;
  }
  // Each worker with its `taken` counter.
  const workers = new Map<Worker, Int32Array>();
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (err: Error): void => {
      if (failed) return;
      failed = true;
      for (const [worker, taken] of workers) {
        // Wake a worker waiting for its batches to be taken, so that it sees the termination.
        Atomics.store(taken, 0, 2 ** 30);
        Atomics.notify(taken, 0);
        void worker.terminate();
      }
      reject(err);
    };
    const start = (): void => {
      if (failed) return;
      if (next === files.length) {
        if (workers.size === 0) resolve();
        return;
      }
      const taken = new Int32Array(new SharedArrayBuffer(4));
      const job: CdxJob = { path: files[next++]!, ...options, taken };
      // A small young generation: a worker's garbage is per record, and three default heaps overshot the 300 MB budget.
      const worker = new Worker(new URL('./cdx-worker.js', import.meta.url), { workerData: job, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
      workers.set(worker, taken);
      worker.on('message', (message: CdxMessage) => {
        if (failed) return;
        try {
          if (message.kind === 'lines') {
            addBatch(message.text);
            Atomics.add(taken, 0, 1);
            Atomics.notify(taken, 0);
          } else if (message.kind === 'problem') {
            onProblem(revive(message.problem) as SherlockError);
          } else {
            fail(revive(message.error));
          }
        } catch (err) {
          // The sort failing (a full disk) ends the export like a read error.
          fail(err as Error);
        }
      });
      worker.on('error', fail);
      worker.on('exit', () => {
        workers.delete(worker);
        start();
      });
    };
    for (let i = 0; i < threads; i++) start();
  });
}
