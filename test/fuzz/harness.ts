/**
 * What the fuzz tests share (test/fuzz/*.test.ts): each file is a table of
 * fast-check properties, one per parser, and runs itself twice over. In the
 * main thread it registers one node:test test per property, each of which
 * starts the same file again as a worker thread told to run that property; a
 * watchdog terminates the worker if the property does not finish in time, so
 * an input that makes a parser loop forever fails the test (naming the seed
 * to replay it with) instead of hanging the suite — a synchronous loop cannot
 * be interrupted any other way.
 *
 * The contract every property checks: a parser given any bytes returns a
 * result or throws its own documented error type (SherlockError, or the
 * QueryError / MessageError of the searcher's parsers); any other exception
 * is a crash, and fast-check shrinks the input that caused it.
 *
 * Runs: each property has a base number of runs (CI); SHERLOCK_FUZZ_SCALE
 * multiplies them (`npm run fuzz` sets 50) and SHERLOCK_FUZZ_SEED replays a
 * seed. The watchdog grows with the scale.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import fc from 'fast-check';
import { isSherlockError } from '../../common/errors.js';

/** One property: it runs fast-check itself with the parameters given and returns how many inputs it tried. */
export type Property = (params: fc.Parameters<unknown>) => number | Promise<number>;

export interface FuzzCase {
  /** Base runs in CI. */
  runs: number;
  property: Property;
}

const SCALE = Number(process.env['SHERLOCK_FUZZ_SCALE'] ?? 1);
/** Seconds a property may take per 1,000 runs before it counts as a hang, besides a fixed allowance. */
const SECONDS_PER_1000_RUNS = 60;

interface Order {
  name: string;
  runs: number;
  seed: number;
}

type Report = { ok: true; runs: number } | { ok: false; message: string };

/** Registers (main thread) or runs (worker) the properties of the fuzz file at `moduleUrl`. */
export function fuzzFile(moduleUrl: string, cases: Record<string, FuzzCase>): void {
  if (isMainThread) {
    for (const [name, c] of Object.entries(cases)) test(name, () => runInWorker(moduleUrl, name, c));
    return;
  }
  const order = workerData as Order;
  const c = cases[order.name];
  if (c === undefined) return; // another file's worker: this one only imports the module
  void (async () => {
    let report: Report;
    try {
      const runs = await c.property({ numRuns: order.runs, seed: order.seed, endOnFailure: false });
      report = { ok: true, runs };
    } catch (err) {
      // fast-check keeps the property's own error as the cause.
      const cause = err instanceof Error ? (err.cause as Error | undefined) : undefined;
      report = { ok: false, message: `${err instanceof Error ? err.message : String(err)}${cause === undefined ? '' : `\n${cause.stack ?? String(cause)}`}` };
    }
    // A counterexample made from a big seed file is printed whole by fast-check; its start is enough to see it.
    if (!report.ok) report.message = report.message.split('\n').map((line) => (line.length > 600 ? `${line.slice(0, 600)}… (${line.length} characters)` : line)).join('\n');
    parentPort!.postMessage(report);
  })();
}

async function runInWorker(moduleUrl: string, name: string, c: FuzzCase): Promise<void> {
  const runs = Math.max(1, Math.round(c.runs * SCALE));
  const seed = Number(process.env['SHERLOCK_FUZZ_SEED'] ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0);
  const limitMs = 30_000 + (runs / 1000) * SECONDS_PER_1000_RUNS * 1000;
  const worker = new Worker(new URL(moduleUrl), { workerData: { name, runs, seed } satisfies Order });
  const report = await new Promise<Report>((resolve) => {
    const watchdog = setTimeout(() => {
      void worker.terminate();
      resolve({ ok: false, message: `did not finish ${runs} runs in ${limitMs / 1000} s: a parser hangs or crawls on some input (replay with SHERLOCK_FUZZ_SEED=${seed})` });
    }, limitMs);
    worker.once('message', (message: Report) => {
      clearTimeout(watchdog);
      resolve(message);
    });
    worker.once('error', (err) => {
      clearTimeout(watchdog);
      resolve({ ok: false, message: `the worker died: ${err.stack ?? err.message}` });
    });
    worker.once('exit', (code) => {
      clearTimeout(watchdog);
      resolve({ ok: false, message: `the worker exited (${code}) without a report` });
    });
  });
  await worker.terminate();
  if (!report.ok) assert.fail(`${name} (seed ${seed}):\n${report.message}`);
  console.log(`fuzz ${name}: ${report.runs} inputs, seed ${seed}`);
}

/** fc.assert of a synchronous predicate, returning the number of runs. */
export function check<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => void, params: fc.Parameters<unknown>): number {
  fc.assert(fc.property(arbitrary, predicate), params as fc.Parameters<[T]>);
  return params.numRuns ?? 100;
}

/**
 * Calls `parse`; returns its result, or undefined when it threw one of the
 * allowed errors (SherlockError unless others are named). Anything else
 * escapes and fails the property.
 */
export function parsed<T>(parse: () => T, ...allowed: Array<abstract new (...args: never[]) => Error>): T | undefined {
  try {
    return parse();
  } catch (err) {
    if (isSherlockError(err) || allowed.some((type) => err instanceof type)) return undefined;
    throw err;
  }
}

/** parsed() for a reader of the file at `path`: its SherlockError must name that file (STYLE §6, the place). */
export function parsedFile<T>(path: string, parse: () => T): T | undefined {
  try {
    return parse();
  } catch (err) {
    if (!isSherlockError(err)) throw err;
    assert.equal(err.place.file, path, `${err.code} does not name the file: ${err.message}`);
    return undefined;
  }
}

/** Async variant of parsed(). */
export async function parsedAsync<T>(parse: () => Promise<T>, ...allowed: Array<abstract new (...args: never[]) => Error>): Promise<T | undefined> {
  try {
    return await parse();
  } catch (err) {
    if (isSherlockError(err) || allowed.some((type) => err instanceof type)) return undefined;
    throw err;
  }
}

/**
 * Byte strings near a valid one: a few edits, each a bit flip, a byte set to
 * an interesting value, a cut, a deletion, an insertion of random bytes, or
 * a duplicated stretch. Most stay close enough to valid to get past the
 * magic numbers and into the parser's deeper branches.
 */
export function mutated(valid: Buffer, maxEdits = 4): fc.Arbitrary<Buffer> {
  const at = fc.nat({ max: Math.max(0, valid.length - 1) });
  const edit = fc.oneof(
    fc.tuple(fc.constant('flip' as const), at, fc.nat({ max: 7 })),
    fc.tuple(fc.constant('set' as const), at, fc.constantFrom(0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x0d, 0x20, 0x3c, 0x22)),
    fc.tuple(fc.constant('cut' as const), at, fc.constant(0)),
    fc.tuple(fc.constant('delete' as const), at, fc.integer({ min: 1, max: 64 })),
    fc.tuple(fc.constant('insert' as const), at, fc.integer({ min: 1, max: 64 })),
    fc.tuple(fc.constant('repeat' as const), at, fc.integer({ min: 1, max: 256 })),
  );
  return fc.tuple(fc.array(edit, { minLength: 1, maxLength: maxEdits }), fc.uint8Array({ minLength: 64, maxLength: 64 })).map(([edits, noise]) => {
    let out = Buffer.from(valid);
    for (const [kind, where, n] of edits) {
      const i = Math.min(where, Math.max(0, out.length - 1));
      if (out.length === 0) break;
      if (kind === 'flip') out[i] = out[i]! ^ (1 << n);
      else if (kind === 'set') out[i] = n;
      else if (kind === 'cut') out = out.subarray(0, i);
      else if (kind === 'delete') out = Buffer.concat([out.subarray(0, i), out.subarray(i + n)]);
      else if (kind === 'insert') out = Buffer.concat([out.subarray(0, i), Buffer.from(noise.subarray(0, n)), out.subarray(i)]);
      else out = Buffer.concat([out.subarray(0, i + n), out.subarray(i)]);
    }
    return out;
  });
}

/** Random bytes, or near-valid ones: the two inputs every property gets. */
export function bytesNear(valid: Buffer[], maxEdits?: number): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a)) },
    { weight: 4, arbitrary: fc.constantFrom(...valid).chain((v) => mutated(v, maxEdits)) },
  );
}
