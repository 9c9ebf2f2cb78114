/**
 * Sorting any number of lines in byte order with bounded memory: lines are
 * kept until they reach a memory budget, then sorted and spilled as a run
 * file; at the end the runs are merged k ways (one cursor per run, a tree
 * of losers over their current lines). Nothing is held in memory beyond the budget
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
 * merge is left to the main sorter. That merge can be shared too: `slices`
 * cuts the key space into ranges of about equal bytes (split keys sampled
 * from the run files, each run's cut found by binary search on its lines),
 * and each slice, the byte range of every run that falls in it, is merged on
 * its own (`writeSlice`, any thread) straight to its place in the output,
 * which is known beforehand: the slices' lines are exactly the runs' bytes.
 * A slice's lines can also be read in order (`mergedLines`) by a thread that
 * makes something else of them; `slices`' `group` then keeps each group of
 * lines (a key's) whole in one slice.
 */

import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ioError } from './errors.js';
import { readAt, writeAt } from './files.js';
import { FileWindow } from './archive/gzip-member.js';

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
// Bytes read at a time looking for a line's end in a run file (binary search, samples).
const SEEK_CHUNK = 4 * 1024;
// A binary search's range read whole once it is this narrow.
const NEAR = 32 * 1024;

/** Part of a run file: the bytes [from, to), whole lines. */
export interface RunRange {
  path: string;
  from: number;
  to: number;
}

/** One slice of the final merge: the range of every run whose lines fall in the slice's stretch of the key space. */
export interface MergeSlice {
  runs: RunRange[];
  /** Where the slice's lines start in the merged output (bytes of the slices before it). */
  at: number;
  /** Bytes of the slice's lines, LFs included. */
  size: number;
}

// Lines read per run to pick the split keys of `slices`.
const SAMPLES = 64;

/** Reads one sorted run file, or a range of it, line by line. */
class RunCursor {
  private text = '';
  private at = 0;
  private ended = false;
  line: string | undefined;

  constructor(
    private readonly path: string,
    private readonly fd: number,
    private position = 0,
    private readonly to = Infinity,
    private readonly chunkSize = READ_CHUNK,
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
      const want = Math.min(this.chunkSize, this.to - this.position);
      const chunk = readAt(this.fd, this.path, want, this.position);
      this.position += chunk.length;
      this.ended = chunk.length < this.chunkSize;
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

  /**
   * The final merge cut into about `count` slices of about equal bytes, in
   * key order, for merging apart (`writeSlice`); the lines held are spilled
   * first. Equal lines all fall in one slice, so the slices' outputs laid end
   * to end are the whole merge byte for byte. With `group`, lines whose
   * group is the same fall in one slice too; a line's group must be a
   * prefix of it that sorts below every line of a higher group (a key
   * followed by a separator that sorts below every key byte, e.g. NUL). The
   * sorter is empty afterwards; its run files stay until `discard`.
   */
  slices(count: number, group: (line: string) => string = (line) => line): MergeSlice[] {
    return [...this.eachSlice(count, group)];
  }

  /** `slices` one at a time, each slice's cuts found when it is asked for: merging the first ones can start at once. */
  *eachSlice(count: number, group: (line: string) => string = (line) => line): Generator<MergeSlice> {
    if (this.lines.length > 0) this.spill();
    const runs: RunFile[] = [];
    try {
      for (const path of this.runs.splice(0)) runs.push(RunFile.open(path));
      const total = runs.reduce((sum, run) => sum + run.size, 0);
      // Each sampled line stands for the bytes from it to the next sample of its run.
      const samples: Array<{ line: string; weight: number }> = [];
      for (const run of runs) for (const { line } of run.sample()) samples.push({ line: group(line), weight: run.size / SAMPLES });
      samples.sort((a, b) => (a.line < b.line ? -1 : a.line > b.line ? 1 : 0));
      const splits: string[] = [];
      let seen = 0;
      for (const sample of samples) {
        seen += sample.weight;
        if (seen * count >= total * (splits.length + 1) && splits.length < count - 1 && sample.line !== splits.at(-1)) splits.push(sample.line);
      }
      let from = runs.map(() => 0);
      let at = 0;
      for (let i = 0; i <= splits.length; i++) {
        const to = runs.map((run) => (i < splits.length ? run.firstAtLeast(splits[i]!) : run.size));
        const ranges = runs.map((run, r) => ({ path: run.path, from: from[r]!, to: to[r]! })).filter((range) => range.to > range.from);
        const size = ranges.reduce((sum, range) => sum + range.to - range.from, 0);
        if (size > 0) yield { runs: ranges, at, size };
        at += size;
        from = to;
      }
    } finally {
      for (const run of runs) run.close();
    }
  }

  private spill(): void {
    const path = join(this.runDirectory(), `run-${String(this.spills++).padStart(5, '0')}`);
    const lines = this.lines.sort();
    this.lines = [];
    this.held = 0;
    const out = LineWriter.create(path);
    try {
      for (const line of lines) out.write(line);
      out.flush();
    } finally {
      out.close();
    }
    this.runs.push(path);
  }

  private merge(): Generator<string> {
    return mergedLines(this.runs.map((path) => ({ path, from: 0, to: Infinity })));
  }
}

/**
 * Merges one slice (`ExternalSorter#slices`) into the file `path` (which
 * must exist) at `position + slice.at`; the run files are only read, so
 * slices of one sort can be merged in several threads at once.
 */
export function writeSlice(slice: MergeSlice, path: string, position: number): void {
  const out = LineWriter.open(path, position + slice.at);
  try {
    for (const line of mergedLines(slice.runs)) out.write(line);
    out.flush();
    if (out.written !== slice.size) throw new Error(`merged ${out.written} bytes of a slice of ${slice.size}`);
  } finally {
    out.close();
  }
}

/**
 * The lines of run ranges (a slice's `runs`, `ExternalSorter#slices`) merged
 * in byte order, read `readChunk` bytes at a time a run; the run files are
 * only read.
 */
export function* mergedLines(ranges: RunRange[], readChunk = READ_CHUNK): Generator<string> {
  const merger = new Merger(ranges, readChunk);
  try {
    for (let line = merger.next(); line !== undefined; line = merger.next()) yield line;
  } finally {
    merger.close();
  }
}

/** Lines (byte strings) written with their LFs at a position of a file, copied into one reused buffer: joining them into strings left as much garbage as the lines. */
class LineWriter {
  private readonly batch = Buffer.allocUnsafe(WRITE_BATCH);
  private size = 0;
  written = 0;

  private constructor(
    private readonly path: string,
    private readonly fd: number,
    private position: number,
  ) {}

  static create(path: string): LineWriter {
    try {
      return new LineWriter(path, openSync(path, 'wx'), 0);
    } catch (err) {
      throw ioError(err, path, 'create');
    }
  }

  static open(path: string, position: number): LineWriter {
    try {
      return new LineWriter(path, openSync(path, 'r+'), position);
    } catch (err) {
      throw ioError(err, path, 'open');
    }
  }

  write(line: string): void {
    if (this.size + line.length + 1 > WRITE_BATCH) {
      this.flush();
      if (line.length + 1 > WRITE_BATCH) {
        this.put(Buffer.from(line + '\n', 'latin1'));
        return;
      }
    }
    this.size += this.batch.write(line, this.size, 'latin1');
    this.batch[this.size++] = 0x0a;
  }

  flush(): void {
    this.put(this.batch.subarray(0, this.size));
    this.size = 0;
  }

  close(): void {
    closeSync(this.fd);
  }

  private put(bytes: Buffer): void {
    writeAt(this.fd, this.path, bytes, this.position);
    this.position += bytes.length;
    this.written += bytes.length;
  }
}

/**
 * The k-way merge of run ranges: a tree of losers (Knuth, TAOCP 5.4.1), so
 * that each line out costs one comparison per level (a binary heap makes
 * two); an exhausted cursor loses to every line.
 */
class Merger {
  private readonly fds: number[] = [];
  private readonly cursors: RunCursor[] = [];
  /** tree[0]: the winner's cursor; tree[1…k-1]: the loser of each match; k stands for a line below every other while the tree is built. */
  private readonly tree: Int32Array;

  constructor(ranges: RunRange[], readChunk = READ_CHUNK) {
    try {
      for (const range of ranges) {
        let fd: number;
        try {
          fd = openSync(range.path, 'r');
        } catch (err) {
          throw ioError(err, range.path, 'open');
        }
        this.fds.push(fd);
        this.cursors.push(new RunCursor(range.path, fd, range.from, range.to, readChunk));
      }
    } catch (err) {
      this.close();
      throw err;
    }
    const k = this.cursors.length;
    this.tree = new Int32Array(Math.max(1, k)).fill(k);
    for (let leaf = k - 1; leaf >= 0; leaf--) this.replay(leaf);
  }

  /** The next line in byte order, undefined at the end. */
  next(): string | undefined {
    const winner = this.tree[0]!;
    const cursor = this.cursors[winner];
    const line = cursor?.line;
    if (line === undefined) return undefined;
    cursor!.advance();
    this.replay(winner);
    return line;
  }

  close(): void {
    for (const fd of this.fds.splice(0)) closeSync(fd);
  }

  /** Plays the matches from `leaf` up to the root after its line changed. */
  private replay(leaf: number): void {
    const { tree, cursors } = this;
    const k = cursors.length;
    let winner = leaf;
    for (let node = (leaf + k) >> 1; node > 0; node >>= 1) {
      const other = tree[node]!;
      if (other === k || (winner !== k && beats(cursors[other]!.line, cursors[winner]!.line))) {
        tree[node] = winner;
        winner = other;
      }
    }
    tree[0] = winner;
  }
}

/** Whether line `a` goes out before `b`; undefined (an exhausted run) after everything. */
function beats(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && (b === undefined || a < b);
}

/** A run file opened for finding lines by position: where `slices` cuts it. */
class RunFile {
  /** Lines at evenly spaced positions, in file (and so in key) order, once sampled. */
  private samples: Array<{ start: number; line: string }> = [];

  private constructor(private readonly window: FileWindow) {}

  static open(path: string): RunFile {
    // One reused buffer: thousands of binary-search reads left as many dead Buffers (peak RSS).
    return new RunFile(FileWindow.open(path, SEEK_CHUNK, true));
  }

  get path(): string {
    return this.window.path;
  }

  get size(): number {
    return this.window.size;
  }

  close(): void {
    this.window.close();
  }

  /** SAMPLES lines at evenly spaced positions (fewer in a small run), kept to narrow `firstAtLeast`. */
  sample(): Array<{ start: number; line: string }> {
    this.samples = [];
    for (let j = 0; j < SAMPLES; j++) {
      const found = this.lineFrom(Math.floor((j * this.size) / SAMPLES));
      if (found.line !== undefined && found.start !== this.samples.at(-1)?.start) this.samples.push({ start: found.start, line: found.line });
    }
    return this.samples;
  }

  /**
   * The first line that starts at or after `position` (a line starts at 0 or
   * just after a LF) and its start; at the end, the size and no line. One
   * read when the line is short, as run lines are.
   */
  lineFrom(position: number): { start: number; line?: string } {
    let start = position;
    let chunk = this.window.read(Math.max(0, position - 1), SEEK_CHUNK);
    let at = position === 0 ? 0 : chunk.indexOf(0x0a) + 1;
    for (let read = Math.max(0, position - 1); position > 0 && at === 0; ) {
      read += chunk.length;
      if (read >= this.size) return { start: this.size };
      chunk = this.window.read(read, SEEK_CHUNK);
      at = chunk.indexOf(0x0a) + 1;
      start = read + at;
    }
    if (position > 0 && start === position) start = position - 1 + at;
    if (start >= this.size) return { start: this.size };
    const lf = chunk.indexOf(0x0a, at);
    if (lf !== -1) return { start, line: chunk.toString('latin1', at, lf) };
    // A line longer than the chunk: read from its start until its LF.
    for (let want = 4 * SEEK_CHUNK; ; want *= 4) {
      const bytes = this.window.read(start, want);
      const end = bytes.indexOf(0x0a);
      if (end !== -1 || bytes.length < want) return { start, line: bytes.toString('latin1', 0, end === -1 ? bytes.length : end) };
    }
  }

  /** Where the first line not below `key` starts, or the size: a binary search on the lines between the samples around it. */
  firstAtLeast(key: string): number {
    const above = this.samples.findIndex((s) => s.line >= key);
    let high = above === -1 ? this.size : this.samples[above]!.start;
    let low = above === 0 ? 0 : above === -1 ? (this.samples.at(-1)?.start ?? -1) + 1 : this.samples[above - 1]!.start + 1;
    if (above === 0 || this.samples.length === 0) low = 0;
    while (low < high) {
      // The last steps in one read: the window then holds every line they look at.
      if (high - low <= NEAR) this.window.read(Math.max(0, low - 1), high - low + SEEK_CHUNK + 1);
      const middle = Math.floor((low + high) / 2);
      const { start, line } = this.lineFrom(middle);
      if (start >= high || line === undefined || line >= key) high = middle;
      else low = middle + 1;
    }
    return high === this.size ? this.size : this.lineFrom(low).start;
  }
}
