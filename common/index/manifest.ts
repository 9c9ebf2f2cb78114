/**
 * The Manifest of an index version: written last by the publish stage (DESIGN
 * §6 stage 9), read first by the searcher. It says which layout the version
 * follows, how many of each thing it holds, and the size and CRC-32 of every
 * file in it, so that a damaged or half-copied version is refused before any
 * query runs on it. The seed's `parameters` file (sherlock-original §4 item 12)
 * played this part; the layout is ours (docs/indexer.md).
 *
 *   Header fields (file.ts): 0 number of files listed
 *   Body: one JSON object, UTF-8
 *     format   INDEX_LAYOUT: the layout of the whole set of files (a version
 *              with a newer one is refused as a whole)
 *     version  the version's name (its directory under state/index/)
 *     created  Unix seconds
 *     counts   {"cards": N, "words": N, …}: whole numbers by name
 *     files    [{"name", "size", "crc32"}]: every other file of the version,
 *              by its name in the directory, its size in bytes and the CRC-32
 *              of all its bytes (8 hex digits)
 */

import { closeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import { SherlockError } from '../errors.js';
import { readInto } from '../files.js';
import { corruptIndex, IndexFileWriter, openRead, readIndexFile, type IndexFormat } from './file.js';

export const MANIFEST_FORMAT: IndexFormat = { magic: 'SHERLOCK-MANIFST', version: 1, fields: ['files'], what: 'Manifest' };
export const MANIFEST_NAME = 'Manifest';
/** The layout of the files of an index version, as described in docs/indexer.md. */
export const INDEX_LAYOUT = 1;
const BLOCK = 1 << 20;

const fileEntry = z.object({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/),
  size: z.number().int().min(0),
  crc32: z.string().regex(/^[0-9a-f]{8}$/),
});

const manifestSchema = z
  .object({
    format: z.number().int().min(1),
    version: z.string().min(1),
    created: z.number().int().min(0),
    counts: z.record(z.string(), z.number().int().min(0)),
    files: z.array(fileEntry),
  })
  .strict();

export type Manifest = z.output<typeof manifestSchema>;
export type ManifestFile = z.output<typeof fileEntry>;

/** Size and CRC-32 of a whole file, read in blocks. */
export function fileChecksum(dir: string, name: string): ManifestFile {
  const file = join(dir, name);
  const fd = openRead(file);
  // One buffer for every block: a version's files are read whole at each load of the searcher.
  const buffer = Buffer.allocUnsafe(BLOCK);
  try {
    let crc = 0;
    let size = 0;
    for (;;) {
      const block = readInto(fd, file, buffer, BLOCK, size);
      crc = crc32(block, crc);
      size += block.length;
      if (block.length < BLOCK) break;
    }
    return { name, size, crc32: (crc >>> 0).toString(16).padStart(8, '0') };
  } finally {
    closeSync(fd);
  }
}

/** Checksums the named files of `dir` and writes `dir/Manifest`; returns what it wrote. */
export function writeManifest(dir: string, info: { version: string; created: number; counts: Record<string, number>; files: readonly string[] }): Manifest {
  const manifest: Manifest = {
    format: INDEX_LAYOUT,
    version: info.version,
    created: info.created,
    counts: info.counts,
    files: info.files.map((name) => fileChecksum(dir, name)),
  };
  const parsed = manifestSchema.safeParse(manifest);
  if (!parsed.success) throw new RangeError(`bad manifest: ${parsed.error.issues[0]?.message}`);
  const out = new IndexFileWriter(join(dir, MANIFEST_NAME), MANIFEST_FORMAT);
  out.write(Buffer.from(JSON.stringify(manifest), 'utf8'));
  out.finish([manifest.files.length]);
  return manifest;
}

export function readManifest(file: string): Manifest {
  const whole = readIndexFile(file, MANIFEST_FORMAT);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(whole.body));
  } catch (err) {
    throw whole.corrupt(0, `manifest is not JSON: ${(err as Error).message}`);
  }
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw whole.corrupt(0, `manifest ${issue.path.join('.') || 'object'}: ${issue.message}`);
  }
  const manifest = parsed.data;
  if (manifest.format > INDEX_LAYOUT) throw whole.corrupt(0, `index layout ${manifest.format} is newer than this sherlock reads (${INDEX_LAYOUT})`);
  if (manifest.files.length !== whole.fields[0]) throw whole.corrupt(0, `${manifest.files.length} files listed, the header says ${whole.fields[0]}`);
  return manifest;
}

/**
 * Reads `dir/Manifest` and checks every file it lists against it: one
 * SHERLOCK_CORRUPT_INDEX (or SHERLOCK_NOT_FOUND) per file that is missing or
 * differs in size or CRC-32. A damaged Manifest throws.
 */
export function checkIndexDir(dir: string): { manifest: Manifest; problems: SherlockError[] } {
  const manifest = readManifest(join(dir, MANIFEST_NAME));
  const problems: SherlockError[] = [];
  for (const expected of manifest.files) {
    const file = join(dir, expected.name);
    let actual: ManifestFile;
    try {
      actual = fileChecksum(dir, expected.name);
    } catch (err) {
      if (!(err instanceof SherlockError)) throw err;
      problems.push(err);
      continue;
    }
    if (actual.size !== expected.size) problems.push(corruptIndex(file, Math.min(actual.size, expected.size), `${actual.size} bytes, the manifest says ${expected.size}`));
    else if (actual.crc32 !== expected.crc32) problems.push(corruptIndex(file, 0, `CRC-32 ${actual.crc32}, the manifest says ${expected.crc32}`));
  }
  return { manifest, problems };
}

/** Reads `dir/Manifest` and checks every file it lists; the first mismatch is SHERLOCK_CORRUPT_INDEX naming that file. */
export function verifyIndexDir(dir: string): Manifest {
  const { manifest, problems } = checkIndexDir(dir);
  if (problems.length > 0) throw problems[0]!;
  return manifest;
}
