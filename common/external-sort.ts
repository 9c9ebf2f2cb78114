/**
 * Sorting any number of lines in byte order with bounded memory: lines are
 * kept until they reach a memory budget, then sorted and spilled as a run
 * file; at the end the runs are merged k ways (one cursor per run, a binary
 * heap of their current lines). Nothing is held in memory beyond the budget
 * and one read buffer per run. CDX export and ZipNum need byte order
 * (`LC_ALL=C sort`, spec/arc-cdx.md §2.4); the indexer can use the same.
 *
 * Lines are byte strings: one character per byte (a Latin-1 reading, what
 * `Buffer#toString('latin1')` gives), so that JavaScript's string order, which
 * compares UTF-16 code units, is byte order. Buffers are taken as they are.
 * A line must not hold LF, the run files' separator.
 *
 * Run files live in a fresh directory under `tmpDir` and are removed when
 * `sorted()` ends, is abandoned (`return()`), or `discard()` is called. They
 * are scratch data: nothing survives a crash but stale files in the
 * temporary directory.
 *
 * Sorting can be shared between threads: each helper sorts its share into run
 * files under the main sorter's directory (`tmpDir: main.runDirectory()`) and
 * hands them over (`takeRuns`, then `main.adoptRuns`), so that only the final
 * merge is left to the main sorter.
 */

import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ioError } from './errors.js';
import { readAt, writeAt } from './files.js';

export interface ExternalSortOptions {
  /** Bytes of lines held before a run is spilled (default 64 MiB). Counted as line length plus a per-line overhead. */
  memoryBudget?: number;
  /** Where the run directory is made (default the OS temporary directory). */
  tmpDir?: string;
}

// V8's string header and the array slot, roughly: what a line costs beyond its characters.
const LINE_OVERHEAD = 40;
// Below V8's largest regular object (128 KiB), so the batch strings and read
// chunks die young: 1 MiB ones went to large-object space, freed only by full
// collections, and a merge of a few hundred MB piled them up (peak RSS).
const WRITE_BATCH = 64 * 1024;
const READ_CHUNK = 64 * 1024;

/** Reads one sorted run file line by line. */
class RunCursor {
  private text = '';
  private at = 0;
  private position = 0;
  private ended = false;
  line: string | undefined;

  constructor(
    private readonly path: string,
    private readonly fd: number,
  ) {
    this.advance();
  }

  advance(): void {
    for (;;) {
      const lf = this.text.indexOf('\n', this.at);
      if (lf !== -1) {
        this.line = this.text.slice(this.at, lf);
        this.at = lf + 1;
        return;
      }
      if (this.ended) {
        this.line = undefined;
        return;
      }
      const chunk = readAt(this.fd, this.path, READ_CHUNK, this.position);
      this.position += chunk.length;
      this.ended = chunk.length < READ_CHUNK;
      this.text = this.text.slice(this.at) + chunk.toString('latin1');
      this.at = 0;
    }
  }
}

export class ExternalSorter {
  private lines: string[] = [];
  private held = 0;
  private runs: string[] = [];
  private spills = 0;
  private dir: string | undefined;
  private readonly budget: number;

  constructor(private readonly options: ExternalSortOptions = {}) {
    this.budget = options.memoryBudget ?? 64 * 1024 * 1024;
    if (!(this.budget > 0)) throw new RangeError(`bad memory budget ${this.budget}`);
  }

  /** Run files spilled so far. */
  get spilled(): number {
    return this.runs.length;
  }

  add(line: string | Buffer): void {
    const text = typeof line === 'string' ? line : line.toString('latin1');
    if (text.includes('\n')) throw new RangeError('a line to sort holds a LF');
    this.lines.push(text);
    this.held += text.length + LINE_OVERHEAD;
    if (this.held >= this.budget) this.spill();
  }

  /** The directory of this sorter's run files, made if need be: where helpers' sorters put theirs (as `tmpDir`). */
  runDirectory(): string {
    this.dir ??= mkdtempSync(join(this.options.tmpDir ?? tmpdir(), 'sherlock-sort-'));
    return this.dir;
  }

  /** Spills the lines held and hands over every run file; the caller now owns them, and this sorter is empty. */
  takeRuns(): string[] {
    if (this.lines.length > 0) this.spill();
    const runs = this.runs;
    this.runs = [];
    return runs;
  }

  /** Sorted run files of other sorters (`takeRuns`) to merge with this one's; they are removed with this sorter's. */
  adoptRuns(paths: string[]): void {
    this.runs.push(...paths);
  }

  /** Every line added, in byte order; the run files are removed once iteration ends. */
  *sorted(): Generator<string> {
    try {
      if (this.runs.length === 0) {
        const lines = this.lines.sort();
        this.lines = [];
        this.held = 0;
        yield* lines;
        return;
      }
      if (this.lines.length > 0) this.spill();
      yield* this.merge();
    } finally {
      this.discard();
    }
  }

  /** Removes the run files; the sorter is empty afterwards. */
  discard(): void {
    this.lines = [];
    this.held = 0;
    this.runs = [];
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  private spill(): void {
    const path = join(this.runDirectory(), `run-${String(this.spills++).padStart(5, '0')}`);
    const lines = this.lines.sort();
    this.lines = [];
    this.held = 0;
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (err) {
      throw ioError(err, path, 'create');
    }
    try {
      // Lines are copied into one reused buffer: joining them into strings left as much garbage as the run itself.
      const batch = Buffer.allocUnsafe(WRITE_BATCH);
      let size = 0;
      let position = 0;
      const flush = (): void => {
        writeAt(fd, path, batch.subarray(0, size), position);
        position += size;
        size = 0;
      };
      for (const line of lines) {
        if (size + line.length + 1 > WRITE_BATCH) {
          flush();
          if (line.length + 1 > WRITE_BATCH) {
            writeAt(fd, path, Buffer.from(line + '\n', 'latin1'), position);
            position += line.length + 1;
            continue;
          }
        }
        size += batch.write(line, size, 'latin1');
        batch[size++] = 0x0a;
      }
      flush();
    } finally {
      closeSync(fd);
    }
    this.runs.push(path);
  }

  private *merge(): Generator<string> {
    const fds: number[] = [];
    try {
      const heap: RunCursor[] = [];
      for (const path of this.runs) {
        let fd: number;
        try {
          fd = openSync(path, 'r');
        } catch (err) {
          throw ioError(err, path, 'open');
        }
        fds.push(fd);
        const cursor = new RunCursor(path, fd);
        if (cursor.line !== undefined) heap.push(cursor);
      }
      for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i);
      while (heap.length > 0) {
        const top = heap[0]!;
        yield top.line!;
        top.advance();
        if (top.line === undefined) {
          const last = heap.pop()!;
          if (heap.length === 0) break;
          heap[0] = last;
        }
        siftDown(heap, 0);
      }
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  }
}

function siftDown(heap: RunCursor[], from: number): void {
  const n = heap.length;
  let i = from;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= n) return;
    const right = left + 1;
    const child = right < n && heap[right]!.line! < heap[left]!.line! ? right : left;
    if (!(heap[child]!.line! < heap[i]!.line!)) return;
    [heap[i], heap[child]] = [heap[child]!, heap[i]!];
    i = child;
  }
}
