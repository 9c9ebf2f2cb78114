/**
 * The CDX or CDXJ lines of many ARC or WARC files for `export cdx`, into an external
 * sorter: read by as many worker threads as cores (cdx-worker.ts) when
 * there is more than one part to read, inline otherwise. Reading, inflating,
 * digesting and SURT keys are nearly all of the export's CPU time
 * (docs/benchmarks.md). Each worker also sorts what it reads, into run files
 * in the sorter's directory (each part ends a run), and hands over only their
 * names: no line crosses between threads and the sorting is shared. The
 * workers share the sort memory budget. Given an output file, the workers
 * also do the final merge, slice by slice of the key space
 * (`ExternalSorter#slices`), each slice written straight to its place, so
 * that no core idles while one thread merges and writes the whole index;
 * otherwise the caller merges (`ExternalSorter#sorted`).
 *
 * Work is handed out in parts, so that every thread stays busy to the end: a
 * `.arc.gz` file of twice PART or more is cut into parts of about PART bytes
 * at member boundaries (`ArcReader#recordStartAfter`), other files (plain
 * ARC, WARC) are one part each. A boundary found by scanning is only a candidate (a record can
 * hold an archived `.arc.gz` verbatim), so a part's runs are merged only once
 * the part before it is known to end exactly where it starts; when it does
 * not, the part's runs are left out and the stretch is read again from where
 * the part before really ended. Files read leniently are never cut: a problem
 * is reported as it comes, which a part in doubt could not do.
 *
 * When a thread has nothing left to read while another is still in a part of
 * a `.arc.gz` file, it takes the second half of what that part has left: the
 * reader watches a limit in shared memory and stops at the first record at
 * or after it, and the rest becomes a new part starting there (found by
 * `recordStartAfter` and confirmed like any other), so that the threads reach
 * the merge together. The shared numbers are read without locks: a stale one
 * can only make a part that is not confirmed, and read again.
 *
 * Errors keep their SherlockError code and place across the thread boundary;
 * the first one of a part that is known to be real stops every worker, so
 * within a file the error reported is the first in file order, as reading it
 * whole would report. In lenient mode each problem is reported as it comes
 * (so problems of different files may interleave).
 */

import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openArchive, sniffArchive } from '../../common/archive/archive-read.js';
import { ArcReader } from '../../common/archive/arc-read.js';
import { cdxFields, cdxFieldsOfWarc, formatCdx, formatCdxj, isNotModified } from '../../common/archive/cdx.js';
import { fromThreadError, SherlockError, type ThreadError } from '../../common/errors.js';
import { ExternalSorter, writeSlice, type MergeSlice } from '../../common/external-sort.js';
import { FileWindow, hasGzipMagic } from '../../common/archive/gzip-member.js';

export type CdxFormat = 'cdx' | 'cdxj';

export interface CdxOptions {
  format: CdxFormat;
  lenient: boolean;
  /** Keep 304 Not Modified captures, which IA's CDX-Writer leaves out ("impossible to playback") and so do we by default. */
  notModified: boolean;
}

/** A stretch of one ARC file to read. */
export interface CdxPart {
  path: string;
  /** Where reading starts: this record boundary, or with `seek` the first record found from here (`recordStartAfter`). */
  from: number;
  seek: boolean;
  /** The part ends at the first record found from here; undefined: at the end of the file. */
  to?: number;
}

/** Where a part's reading really started and stopped (the first record boundary at or after its end). */
export interface PartExtent {
  start: number;
  stop: number;
}

/** Bytes of a `.arc.gz` file per part: 100 MB files give 6 parts, enough to even out two or four threads. */
const PART = 16 * 1024 * 1024;

const READ_SIZE = 1024 * 1024;

/** Slices of the final merge per thread: more than one, so that a thread slowed down does not hold up the end. */
const SLICES_PER_THREAD = 4;

/** Where the sorted lines go when the workers merge them: this existing file, from `position` on. */
export interface CdxOutput {
  path: string;
  position: number;
}

/** Worker to parent. */
export type CdxMessage =
  | { kind: 'start'; start: number }
  | { kind: 'problem'; problem: ThreadError }
  | { kind: 'done'; stop: number; runs: string[] }
  | { kind: 'merged' }
  | { kind: 'failed'; error: ThreadError };

/** Parent to worker: a part to read, a slice of the final merge to write, or the end. */
export type CdxOrder = { kind: 'part'; part: CdxPart } | { kind: 'merge'; slice: MergeSlice; output: CdxOutput } | { kind: 'end' };

/** workerData of cdx-worker.ts. */
export interface CdxWorkerData extends CdxOptions {
  /** Where the worker's sorter puts its runs (the parent sorter's directory) and its share of the memory budget. */
  runDir: string;
  sortMemory: number;
  /** Two float64s shared with the parent (`ReadProgress`). */
  progress: SharedArrayBuffer;
}

/** Indexes into a reading thread's shared progress: the offset of the record it reads, and where it is to stop (the first record at or after it). */
export const AT = 0;
export const LIMIT = 1;

/**
 * Reads one part, handing each line (without LF) to `add`, its start to
 * `onStart` before the first line; lenient problems go to `onProblem`. With
 * `progress` (AT, LIMIT), each record's offset is published and reading
 * stops early at the first record at or after the limit.
 */
export function cdxLinesOfPart(
  part: CdxPart,
  options: CdxOptions,
  add: (line: string) => void,
  onProblem: (problem: SherlockError) => void,
  onStart: (start: number) => void = () => {},
  progress?: Float64Array,
): PartExtent {
  const name = basename(part.path);
  const format = options.format === 'cdxj' ? formatCdxj : formatCdx;
  // Each record is indexed before the next is read, so its content need not be copied out of the inflater;
  // reading on and on, 1 MiB reads (not 64 KiB) spare system calls and buffers.
  const reader = openArchive(part.path, { ...(options.lenient ? { onProblem } : {}), borrowContent: true, readSize: READ_SIZE });
  try {
    // Only ARC files are cut into parts (planParts): a WARC part is its whole file.
    const arc = reader instanceof ArcReader ? reader : undefined;
    const start = part.seek ? arc!.recordStartAfter(part.from) : part.from;
    const end = part.to === undefined ? reader.size : arc!.recordStartAfter(part.to);
    onStart(start);
    const fileDate = arc?.versionDate();
    const records = reader.records(start, end);
    for (let next = records.next(); ; next = records.next()) {
      if (next.done === true) return { start, stop: next.value };
      if (progress !== undefined) {
        if (next.value.offset >= progress[LIMIT]!) return { start, stop: next.value.offset };
        progress[AT] = next.value.offset;
      }
      const record = next.value;
      const warc = 'fields' in record ? record : undefined;
      const fields = 'fields' in record ? cdxFieldsOfWarc(record, name) : cdxFields(record, name, fileDate);
      if (fields !== undefined && (options.notModified || !isNotModified(fields, warc))) add(format(fields));
    }
  } finally {
    reader.close();
  }
}

/**
 * The parts of the files: `.arc.gz` files of two parts or more cut every
 * `partSize` bytes (strict reading only), the rest whole; and the sizes of
 * the files that may be cut (also later, by a thread taking half a part).
 */
function planParts(files: string[], lenient: boolean, partSize: number): { parts: CdxPart[]; cuttable: Map<string, number> } {
  const parts: CdxPart[] = [];
  const cuttable = new Map<string, number>();
  for (const path of files) {
    const file = FileWindow.open(path);
    try {
      if (!lenient && hasGzipMagic(file.read(0, 2)) && sniffArchive(path) === 'arc') cuttable.set(path, file.size);
    } finally {
      file.close();
    }
    if (!cuttable.has(path) || file.size < 2 * partSize) {
      parts.push({ path, from: 0, seek: false });
      continue;
    }
    const count = Math.round(file.size / partSize);
    for (let i = 0; i < count; i++) {
      const to = i + 1 === count ? undefined : Math.round(((i + 1) * file.size) / count);
      parts.push({ path, from: Math.round((i * file.size) / count), seek: i > 0, ...(to === undefined ? {} : { to }) });
    }
  }
  return { parts, cuttable };
}

/** A part in the parent: its runs are merged once it is known to start where the part before it stopped. */
interface Tracked {
  part: CdxPart;
  /** The part before it in the same file, until this one is confirmed. */
  before: Tracked | undefined;
  after: Tracked | undefined;
  confirmed: boolean;
  /** Started at a false boundary: its lines and outcome are ignored. */
  dropped: boolean;
  /** Run files of a finished part, until it is confirmed. */
  runs: string[];
  extent: Partial<PartExtent>;
  finished: boolean;
  failure?: Error;
}

/** What a worker is doing: reading a part or merging a slice (or neither, idle); its shared progress (AT, LIMIT). */
interface Busy {
  current?: Tracked;
  merging?: MergeSlice;
  progress: Float64Array;
}

/**
 * Every line of every file into `sorter` (lines or runs), problems (lenient
 * mode) to `onProblem`; with `output`, the sorted lines are then written
 * there and the sorter holds nothing more. `partSize` is for tests.
 */
export async function cdxLines(
  files: string[],
  options: CdxOptions & { sortMemory: number; partSize?: number; output?: CdxOutput },
  sorter: ExternalSorter,
  onProblem: (problem: SherlockError) => void,
): Promise<void> {
  const partSize = options.partSize ?? PART;
  const { parts, cuttable } = planParts(files, options.lenient, partSize);
  const threads = Math.min(parts.length, availableParallelism());
  const output = options.output;
  if (threads <= 1) {
    for (const path of files) cdxLinesOfPart({ path, from: 0, seek: false }, options, (line) => sorter.add(line), onProblem);
    if (output !== undefined) for (const slice of sorter.slices(1)) writeSlice(slice, output.path, output.position);
    return;
  }
  const queue: Tracked[] = [];
  for (const part of parts) {
    const previous = queue.at(-1);
    const before = previous?.part.path === part.path ? previous : undefined;
    const tracked: Tracked = { part, before, after: undefined, confirmed: before === undefined, dropped: false, runs: [], extent: {}, finished: false };
    if (before !== undefined) before.after = tracked;
    queue.push(tracked);
  }
  const all = [...queue];
  // Slices of the final merge, once every part is read (output only).
  let slices: MergeSlice[] | undefined;
  // Each worker with the part it reads or the slice it merges.
  const workers = new Map<Worker, Busy>();
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (err: Error): void => {
      if (failed) return;
      failed = true;
      for (const worker of workers.keys()) void worker.terminate();
      reject(err);
    };
    /** Confirms `t` when the part before it, itself confirmed, stopped where `t` started; re-reads the stretch when not. */
    const settle = (t: Tracked): void => {
      const before = t.before;
      if (t.confirmed || before === undefined || !before.confirmed || before.extent.stop === undefined || t.extent.start === undefined) return;
      if (before.extent.stop !== t.extent.start) {
        t.dropped = true;
        const again: Tracked = {
          part: { path: t.part.path, from: before.extent.stop, seek: false, ...(t.part.to === undefined ? {} : { to: t.part.to }) },
          before: undefined,
          after: t.after,
          confirmed: true,
          dropped: false,
          runs: [],
          extent: {},
          finished: false,
        };
        if (t.after !== undefined) t.after.before = again;
        all.push(again);
        queue.unshift(again);
        dispatch();
        return;
      }
      t.confirmed = true;
      t.before = undefined;
      sorter.adoptRuns(t.runs);
      t.runs = [];
      if (t.failure !== undefined) throw t.failure;
      if (t.finished && t.after !== undefined) settle(t.after);
    };
    /** The second half of what the busy part with most bytes left has left, as a new part; none when every part is nearly done. */
    const takeHalf = (): Tracked | undefined => {
      let from: Busy | undefined;
      let left = partSize / 8;
      for (const state of workers.values()) {
        const t = state.current;
        const size = t === undefined ? undefined : cuttable.get(t.part.path);
        // A dropped part is read again elsewhere; its own reading no longer counts.
        if (size === undefined || t!.extent.start === undefined || t!.dropped) continue;
        const rest = (t!.part.to ?? size) - state.progress[AT]!;
        if (rest > left) [from, left] = [state, rest];
      }
      if (from === undefined) return undefined;
      const t = from.current!;
      const middle = Math.round(from.progress[AT]! + left / 2);
      from.progress[LIMIT] = middle;
      const half: Tracked = {
        part: { path: t.part.path, from: middle, seek: true, ...(t.part.to === undefined ? {} : { to: t.part.to }) },
        before: t,
        after: t.after,
        confirmed: false,
        dropped: false,
        runs: [],
        extent: {},
        finished: false,
      };
      if (t.after !== undefined) t.after.before = half;
      t.after = half;
      t.part = { ...t.part, to: middle };
      all.push(half);
      return half;
    };
    const dispatch = (): void => {
      for (const [worker, state] of workers) {
        if (state.current !== undefined || state.merging !== undefined) continue;
        const next = queue.shift() ?? (slices === undefined ? takeHalf() : undefined);
        if (next !== undefined) {
          state.progress[AT] = next.part.from;
          state.progress[LIMIT] = Infinity;
          state.current = next;
          worker.postMessage({ kind: 'part', part: next.part } satisfies CdxOrder);
          continue;
        }
        const slice = slices?.shift();
        if (slice === undefined) break;
        state.merging = slice;
        worker.postMessage({ kind: 'merge', slice, output: output! } satisfies CdxOrder);
      }
      if (queue.length > 0 || (slices?.length ?? 0) > 0) return;
      if ([...workers.values()].some((state) => state.current !== undefined || state.merging !== undefined)) return;
      if (slices === undefined) {
        const open = all.find((t) => !t.confirmed && !t.dropped);
        if (open !== undefined) {
          // A part that failed before it started (an I/O error seeking its start).
          fail(open.failure ?? new Error(`cdx export: the part at ${open.part.from} of ${open.part.path} was never confirmed`));
          return;
        }
        if (output !== undefined) {
          slices = sorter.slices(threads * SLICES_PER_THREAD);
          dispatch();
          return;
        }
      }
      for (const worker of workers.keys()) worker.postMessage({ kind: 'end' } satisfies CdxOrder);
    };
    const receive = (state: Busy, message: CdxMessage): void => {
      if (state.merging !== undefined) {
        state.merging = undefined;
        if (message.kind === 'failed') throw fromThreadError(message.error);
        dispatch();
        return;
      }
      const t = state.current!;
      if (message.kind === 'problem') {
        onProblem(fromThreadError(message.problem) as SherlockError);
      } else if (message.kind === 'start') {
        t.extent.start = message.start;
        settle(t);
      } else {
        state.current = undefined;
        t.finished = true;
        if (message.kind === 'failed') {
          const error = fromThreadError(message.error);
          if (t.confirmed) throw error;
          t.failure = error;
        } else if (message.kind === 'done') {
          t.extent.stop = message.stop;
          if (t.confirmed) {
            sorter.adoptRuns(message.runs);
            if (t.after !== undefined) settle(t.after);
          } else {
            t.runs = message.runs;
          }
        }
        dispatch();
      }
    };
    const runDir = sorter.runDirectory();
    for (let i = 0; i < threads; i++) {
      const progress = new SharedArrayBuffer(2 * Float64Array.BYTES_PER_ELEMENT);
      const workerData: CdxWorkerData = { format: options.format, lenient: options.lenient, notModified: options.notModified, runDir, sortMemory: Math.floor(options.sortMemory / threads), progress };
      // A small young generation: a worker's garbage is per record, and default heaps overshot the 300 MB budget.
      const worker = new Worker(new URL('./cdx-worker.js', import.meta.url), { workerData, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
      const state: Busy = { progress: new Float64Array(progress) };
      workers.set(worker, state);
      worker.on('message', (message: CdxMessage) => {
        if (failed) return;
        try {
          receive(state, message);
        } catch (err) {
          // A read error of a confirmed part ends the export.
          fail(err as Error);
        }
      });
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (state.current !== undefined) fail(new Error(`cdx export: a worker exited (${code}) while reading ${state.current.part.path}`));
        if (state.merging !== undefined) fail(new Error(`cdx export: a worker exited (${code}) while merging into ${output!.path}`));
        workers.delete(worker);
        if (workers.size === 0 && !failed) resolve();
      });
    }
    dispatch();
  });
}
