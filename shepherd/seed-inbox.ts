/**
 * The shepherd's inbox, `<state>/shepherd/inbox/*.urls`: how seed URLs reach
 * the URL database while a shepherd holds it. `sherlock inject` (and
 * `sherlock crawl`) copy their input here first, whole (temporary name, fsync,
 * rename), then take the inbox themselves when the database is free; a running
 * shepherd takes it at its next cycle instead. A file is removed only after
 * every URL in it is committed, so a crash mid-file injects it again from the
 * start, which changes nothing: a URL already known stays as it is.
 *
 * A `*.refetch` file (`sherlock shepherd refetch`) names sites instead, one
 * origin per line (`http://example.org:8080`), or `*` for every site: their
 * fetched URLs are made due at once. It is taken in turn with the seed files,
 * oldest first, and removed the same way.
 *
 * Format: UTF-8 text, one URL per line (LF or CRLF); blank lines and lines
 * starting with `#` are skipped, and so is a line longer than any URL may be
 * (common/url.ts MAX_URL_LENGTH). Nothing else is checked here: each URL is
 * judged as a seed when it is injected, and a bad one is counted, not fatal.
 */

import { once } from 'node:events';
import { closeSync, createWriteStream, fsyncSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ioError } from '../common/errors.js';
import { createFile, listDirectory, renameDurably } from '../common/files.js';
import { logger } from '../common/log.js';
import { MAX_URL_LENGTH } from '../common/url.js';

const log = logger('shepherd');

const SUFFIX = { seeds: '.urls', refetch: '.refetch' } as const;

export type InboxKind = keyof typeof SUFFIX;
const CHUNK = 1 << 20;
let serial = 0;

export function seedInboxDir(state: string): string {
  return join(state, 'shepherd', 'inbox');
}

/** Files waiting, oldest first. */
export function listSeedFiles(state: string): Array<{ path: string; kind: InboxKind }> {
  const dir = seedInboxDir(state);
  const out: Array<{ path: string; kind: InboxKind }> = [];
  for (const name of listDirectory(dir).sort()) {
    if (name.endsWith(SUFFIX.seeds)) out.push({ path: join(dir, name), kind: 'seeds' });
    else if (name.endsWith(SUFFIX.refetch)) out.push({ path: join(dir, name), kind: 'refetch' });
  }
  return out;
}

/** A new name in the inbox (the time first, so names sort oldest first), its directory made. */
function newName(state: string, kind: InboxKind): { dir: string; temp: string; path: string } {
  const dir = seedInboxDir(state);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw ioError(err, dir, 'creating the directory');
  }
  const name = `${String(Date.now()).padStart(15, '0')}-${process.pid}-${String(serial++).padStart(6, '0')}`;
  return { dir, temp: join(dir, `${name}.tmp`), path: join(dir, name + SUFFIX[kind]) };
}

/** Puts a refetch request (origins, or `*`) into the inbox; returns its path. */
export function writeRefetch(state: string, sites: readonly string[]): string {
  const { path } = newName(state, 'refetch');
  createFile(path, Buffer.from(sites.map((site) => `${site}\n`).join('')));
  return path;
}

/** Copies `input` into the inbox as one new seed file; returns its path. */
export async function spoolSeeds(state: string, input: Readable, source: string): Promise<string> {
  const { temp, path } = newName(state, 'seeds');
  const fd = openFile(temp);
  try {
    const out = createWriteStream('', { fd, autoClose: false });
    try {
      for await (const chunk of input) {
        if (!out.write(chunk as Buffer)) await once(out, 'drain');
      }
    } catch (err) {
      throw ioError(err, source, 'reading the seeds');
    }
    out.end();
    await finished(out).catch((err: unknown) => {
      throw ioError(err, temp, 'writing');
    });
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameDurably(temp, path);
  return path;
}

function openFile(path: string): number {
  try {
    return openSync(path, 'wx');
  } catch (err) {
    throw ioError(err, path, 'creating');
  }
}

/** The lines of an inbox file (URLs, or origins) in batches of at most `batch`, read a chunk at a time (files may hold millions). */
export function* seedBatches(path: string, batch: number): Generator<string[]> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw ioError(err, path, 'opening');
  }
  try {
    let urls: string[] = [];
    let carry = Buffer.alloc(0);
    let overlong = false;
    let position = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(CHUNK);
      let n: number;
      try {
        n = readSync(fd, buffer, 0, CHUNK, position);
      } catch (err) {
        throw ioError(err, path, 'reading');
      }
      position += n;
      let bytes = Buffer.concat([carry, buffer.subarray(0, n)]);
      if (overlong) {
        // The rest of a line too long to be a URL (MAX_URL_LENGTH): dropped, not held in memory.
        const lf = bytes.indexOf(10);
        overlong = lf < 0 && n > 0;
        bytes = lf < 0 ? Buffer.alloc(0) : bytes.subarray(lf + 1);
      }
      // Decode up to the last LF only: a chunk may end inside a UTF-8 sequence, never inside an LF.
      const cut = n === 0 ? bytes.length : bytes.lastIndexOf(10) + 1;
      carry = bytes.subarray(cut);
      if (carry.length > MAX_URL_LENGTH) {
        log.warning('seed line longer than any URL skipped', { file: path, offset: position - carry.length });
        overlong = true;
        carry = Buffer.alloc(0);
      }
      for (const raw of bytes.toString('utf8', 0, cut).split('\n')) {
        const line = raw.trim();
        if (line === '' || line.startsWith('#')) continue;
        urls.push(line);
        if (urls.length >= batch) {
          yield urls;
          urls = [];
        }
      }
      if (n === 0) break;
    }
    if (urls.length > 0) yield urls;
  } finally {
    closeSync(fd);
  }
}

/** Removes a seed file whose URLs are all committed. */
export function removeSeedFile(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch (err) {
    throw ioError(err, path, 'removing');
  }
}
