/**
 * ZipNum clusters (spec/arc-cdx.md §6): a byte-sorted CDX or CDXJ cut into
 * blocks of N lines, each block one gzip member, members concatenated into
 * shards; a summary (`.idx`) with one line per block, and a location file
 * (`.loc`) naming where each shard is. pywb (`zipnum+…` or any index ending
 * `.idx`) and OpenWayback (`ZipNumCluster`) search them; `ZipNumCluster` here
 * does the same lookup.
 *
 *   file                      line                                                      notes
 *   `<name>-NNNNN.cdx.gz`     gzip members, one per block of `blockLines` lines         every line ends in LF; no legend
 *   `<name>.idx`              `<urlkey> <timestamp>` TAB shard TAB offset TAB length    first two fields of the block's first line;
 *                             TAB block number                                          offsets restart at 0 per shard; numbers 1-based across the cluster
 *   `<name>.loc`              shard TAB location                                        locations relative to the `.loc` file's directory
 *
 * The shard name in `.idx` and `.loc` is the file name without `.cdx.gz`.
 * pywb's sample ends a block's last line without LF; we end every line, so
 * that `zcat` of a shard is itself a valid CDX (pywb reads both).
 *
 * Lookup: the last summary line whose key is below the query key names the
 * first block that can hold matches (a key's captures may start in the
 * previous block); blocks are read from there while their first key is below
 * the end of the range, and their lines filtered to [key, end). For an exact
 * URL key the end is `key!` (`!` follows SP), for a prefix the key with its
 * last byte incremented, as pywb computes them. Everything compares bytes
 * (byte strings, as in `external-sort.ts`).
 *
 * The writer appends blocks as they fill and writes `.idx` and `.loc` last, by
 * rename: a cluster without its summary is not a cluster, so a crash leaves
 * nothing a reader would take for complete.
 */

import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { cdxKey } from './cdx.js';
import { ioError, SherlockError } from '../errors.js';
import { createFile, readAt, writeAt } from '../files.js';

export interface ZipNumOptions {
  /** Base name of the `.idx`, `.loc` and shard files (default `index`). */
  name?: string;
  /** Lines per block (default 3000, as IA and Common Crawl). */
  blockLines?: number;
  /** Start a new shard once one holds this many compressed bytes (default 1 GiB). */
  shardSize?: number;
}

export interface ZipNumSummary {
  lines: number;
  blocks: number;
  shards: string[];
}

export interface ZipNumBlock {
  /** `<urlkey> <timestamp>` of the block's first line. */
  key: string;
  shard: string;
  offset: number;
  length: number;
  /** 1-based, across the cluster. */
  number: number;
}

export class ZipNumWriter {
  private block: string[] = [];
  private blocks: ZipNumBlock[] = [];
  private shards: string[] = [];
  private fd: number | undefined;
  private shardPath = '';
  private shardSize = 0;
  private lines = 0;
  private last: string | undefined;
  private readonly name: string;
  private readonly blockLines: number;
  private readonly maxShard: number;

  constructor(
    private readonly dir: string,
    options: ZipNumOptions = {},
  ) {
    this.name = options.name ?? 'index';
    this.blockLines = options.blockLines ?? 3000;
    this.maxShard = options.shardSize ?? 2 ** 30;
    if (!/^[A-Za-z0-9._-]+$/.test(this.name)) throw new RangeError(`bad ZipNum name ${JSON.stringify(this.name)}`);
    if (!(Number.isSafeInteger(this.blockLines) && this.blockLines > 0)) throw new RangeError(`bad block size ${this.blockLines}`);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw ioError(err, dir, 'mkdir');
    }
  }

  /** Adds the next line (a byte string without LF); lines must come in byte order. */
  add(line: string): void {
    if (this.last !== undefined && line < this.last) throw new RangeError('ZipNum lines must be added in byte order');
    this.last = line;
    this.block.push(line);
    this.lines += 1;
    if (this.block.length >= this.blockLines) this.flush();
  }

  /** Writes the last block, the summary and the location file. */
  close(): ZipNumSummary {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    const idx = this.blocks.map((b) => `${b.key}\t${b.shard}\t${b.offset}\t${b.length}\t${b.number}\n`).join('');
    const loc = this.shards.map((shard) => `${shard}\t${shard}.cdx.gz\n`).join('');
    createFile(join(this.dir, `${this.name}.loc`), Buffer.from(loc, 'latin1'));
    createFile(join(this.dir, `${this.name}.idx`), Buffer.from(idx, 'latin1'));
    return { lines: this.lines, blocks: this.blocks.length, shards: [...this.shards] };
  }

  private flush(): void {
    if (this.block.length === 0) return;
    const member = gzipSync(Buffer.from(this.block.join('\n') + '\n', 'latin1'));
    if (this.fd === undefined || this.shardSize >= this.maxShard) this.nextShard();
    writeAt(this.fd!, this.shardPath, member, this.shardSize);
    this.blocks.push({
      key: cdxKey(this.block[0]!),
      shard: this.shards.at(-1)!,
      offset: this.shardSize,
      length: member.length,
      number: this.blocks.length + 1,
    });
    this.shardSize += member.length;
    this.block = [];
  }

  private nextShard(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    const shard = `${this.name}-${String(this.shards.length).padStart(5, '0')}`;
    this.shardPath = join(this.dir, `${shard}.cdx.gz`);
    try {
      this.fd = openSync(this.shardPath, 'w');
    } catch (err) {
      throw ioError(err, this.shardPath, 'create');
    }
    this.shards.push(shard);
    this.shardSize = 0;
  }
}

function corrupt(file: string, offset: number, message: string): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_INDEX', message, { file, offset });
}

/** Reads a cluster's summary and location file and answers lookups from its shards. */
export class ZipNumCluster {
  private readonly fds = new Map<string, { fd: number; path: string }>();

  private constructor(
    readonly blocks: readonly ZipNumBlock[],
    private readonly locations: ReadonlyMap<string, string[]>,
  ) {}

  /** Opens the cluster whose summary is `idxPath`; the location file is beside it with `.loc` for `.idx`. */
  static open(idxPath: string, locPath = idxPath.replace(/\.(idx|summary)$/, '') + '.loc'): ZipNumCluster {
    const blocks = parseLines(idxPath, (fields, offset) => {
      const [key, shard, start, length, number] = fields;
      const nums = [start, length].map(Number);
      if (shard === undefined || key === undefined || fields.length < 4 || nums.some((n) => !Number.isSafeInteger(n) || n < 0)) {
        throw corrupt(idxPath, offset, 'summary line is not `key TAB shard TAB offset TAB length [TAB number]`');
      }
      return { key, shard, offset: nums[0]!, length: nums[1]!, number: number === undefined ? 0 : Number(number) };
    });
    for (let i = 1; i < blocks.length; i++) {
      if (blocks[i]!.key < blocks[i - 1]!.key) throw corrupt(idxPath, 0, `summary line ${i + 1} is out of byte order`);
    }
    const base = dirname(locPath);
    const locations = new Map<string, string[]>();
    for (const fields of parseLines(locPath, (f) => f)) {
      const [shard, ...paths] = fields;
      locations.set(shard!, paths.map((p) => (isAbsolute(p) ? p : resolve(base, p))));
    }
    return new ZipNumCluster(blocks, locations);
  }

  close(): void {
    for (const { fd } of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }

  /** The lines of one block (index into `blocks`). */
  blockLines(index: number): string[] {
    const block = this.blocks[index]!;
    const { fd, path } = this.shard(block.shard);
    const bytes = readAt(fd, path, block.length, block.offset);
    if (bytes.length < block.length) throw corrupt(path, block.offset, `block ${block.number} runs past the end of the shard`);
    let text: string;
    try {
      text = gunzipSync(bytes).toString('latin1');
    } catch (err) {
      throw new SherlockError('SHERLOCK_CORRUPT_GZIP', `block ${block.number} does not inflate`, { file: path, offset: block.offset }, { cause: err });
    }
    return text.split('\n').filter((line) => line !== '');
  }

  /** Lines whose urlkey is `key` (or starts with it, with `prefix`), in order. */
  *lookup(key: string, options: { prefix?: boolean } = {}): Generator<string> {
    const end = options.prefix === true ? key.slice(0, -1) + String.fromCharCode(key.charCodeAt(key.length - 1) + 1) : key + '!';
    // The last block whose first key is below `key`: the matches may begin in it.
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.blocks[mid]!.key < key) lo = mid + 1;
      else hi = mid;
    }
    for (let i = Math.max(0, lo - 1); i < this.blocks.length && this.blocks[i]!.key < end; i++) {
      for (const line of this.blockLines(i)) {
        if (line >= end) return;
        if (line >= key) yield line;
      }
    }
  }

  private shard(name: string): { fd: number; path: string } {
    const open = this.fds.get(name);
    if (open !== undefined) return open;
    // Locations are tried in order, as pywb does; only local paths are ours to open.
    const path = (this.locations.get(name) ?? []).find((p) => existsSync(p));
    if (path === undefined) throw new SherlockError('SHERLOCK_NOT_FOUND', `no readable location for shard ${name}`, { file: name });
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (err) {
      throw ioError(err, path, 'open');
    }
    const entry = { fd, path };
    this.fds.set(name, entry);
    return entry;
  }
}

/** Tab-separated lines of a small text file, each with its byte offset for errors. */
function parseLines<T>(path: string, parse: (fields: string[], offset: number) => T): T[] {
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch (err) {
    throw ioError(err, path, 'read');
  }
  const out: T[] = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    if (line !== '') out.push(parse(line.split('\t'), offset));
    offset += line.length + 1;
  }
  return out;
}
