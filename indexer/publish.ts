/**
 * Stage 6, publish (DESIGN §6 stage 9): an index version appears whole or
 * not at all, and `state/index/current` always names a whole one.
 *
 *   state/index/
 *     build.lock                 one build at a time (common/lock.ts)
 *     <version>.tmp/             the version being built, every stage's files
 *     <version>/                 a published version: never modified again
 *     current -> <version>       the version the searcher opens
 *
 * Versions are named by their UTC start time, `YYYYMMDDhhmmss`, with `-N`
 * added when that name is taken, so names sort by age.
 *
 * Publishing: the working files are removed (unless kept), every file left
 * is fsynced, the Manifest (common/index/manifest.ts: counts, size and CRC
 * of every file) is written last, the directory is fsynced and renamed to
 * `<version>/`, and `current` is switched by making a symlink under a
 * temporary name and renaming it over `current` (rename(2) is atomic).
 *
 * After a crash: at any moment before the rename of the symlink, `current`
 * still names the previous version, which nothing of the build touched. A
 * `.tmp` directory or symlink left behind is removed by the next build (it
 * holds the lock, so no build is writing it); a version renamed but never
 * made current is an ordinary old version.
 *
 * Old versions: the previous one (what `current` named before) is always
 * kept; any other is removed once the version that replaced it is older
 * than `indexer.grace_period`, so that queries still reading it finish.
 */

import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ioError } from '../common/errors.js';
import { syncDirectory, syncPath } from '../common/files.js';
import { CURRENT, currentVersion } from '../common/index/layout.js';
import { MANIFEST_NAME, writeManifest } from '../common/index/manifest.js';
import { logger } from '../common/log.js';

const log = logger('indexer');

const TEMP_SUFFIX = '.tmp';
const VERSION_NAME = /^(\d{14})(?:-(\d+))?$/;

/** Versions by age, oldest first. */
function versionOrder(a: string, b: string): number {
  const ma = VERSION_NAME.exec(a)!;
  const mb = VERSION_NAME.exec(b)!;
  return ma[1]!.localeCompare(mb[1]!) || Number(ma[2] ?? 0) - Number(mb[2] ?? 0);
}

/** Published version directories, oldest first. */
export function publishedVersions(indexDir: string): string[] {
  return readdirSync(indexDir)
    .filter((name) => VERSION_NAME.test(name))
    .sort(versionOrder);
}

function timestamp(date: Date): string {
  return date.toISOString().replace(/\D/g, '').slice(0, 14);
}

/**
 * Clears what a crashed build left (the caller holds the build lock) and
 * makes the directory of a new version; returns its name and directory.
 */
export function beginVersion(indexDir: string, now: Date): { version: string; dir: string } {
  for (const name of readdirSync(indexDir)) {
    if (name === CURRENT + TEMP_SUFFIX || (name.endsWith(TEMP_SUFFIX) && VERSION_NAME.test(name.slice(0, -TEMP_SUFFIX.length)))) {
      log.notice('removing what an interrupted build left', { file: join(indexDir, name) });
      rmSync(join(indexDir, name), { recursive: true, force: true });
    }
  }
  const base = timestamp(now);
  const taken = new Set(readdirSync(indexDir));
  let version = base;
  for (let n = 1; taken.has(version); n++) version = `${base}-${n}`;
  const dir = join(indexDir, version + TEMP_SUFFIX);
  mkdirSync(dir);
  return { version, dir };
}

export interface PublishReport {
  /** The published directory. */
  dir: string;
  /** Bytes of its files, the Manifest included. */
  bytes: number;
  /** Older versions removed. */
  removed: string[];
}

/**
 * Publishes the version being built in `dir` (beginVersion's): keeps only
 * `files`, writes the Manifest with `counts`, renames, switches `current`,
 * then removes versions past `graceMs`.
 */
export function publishVersion(indexDir: string, version: string, dir: string, info: { files: readonly string[]; counts: Record<string, number>; now: Date; graceMs: number }): PublishReport {
  const keep = new Set(info.files);
  for (const name of readdirSync(dir)) if (!keep.has(name)) rmSync(join(dir, name), { recursive: true, force: true });
  for (const name of info.files) syncPath(join(dir, name));
  writeManifest(dir, { version, created: Math.floor(info.now.getTime() / 1000), counts: info.counts, files: info.files });
  syncDirectory(dir);
  const final = join(indexDir, version);
  const previous = currentVersion(indexDir);
  try {
    renameSync(dir, final);
    syncDirectory(indexDir);
    const link = join(indexDir, CURRENT + TEMP_SUFFIX);
    rmSync(link, { force: true });
    symlinkSync(version, link);
    renameSync(link, join(indexDir, CURRENT));
  } catch (err) {
    throw ioError(err, final, 'publishing');
  }
  syncDirectory(indexDir);
  let bytes = 0;
  for (const name of [...info.files, MANIFEST_NAME]) bytes += statSync(join(final, name)).size;
  return { dir: final, bytes, removed: removeOld(indexDir, new Set([version, ...(previous === undefined ? [] : [previous])]), info.now.getTime(), info.graceMs) };
}

/** Removes the versions not in `kept` whose successor was made more than `graceMs` before `now`. */
function removeOld(indexDir: string, kept: ReadonlySet<string>, now: number, graceMs: number): string[] {
  const versions = publishedVersions(indexDir);
  const removed: string[] = [];
  versions.forEach((version, i) => {
    const successor = versions[i + 1];
    if (kept.has(version) || successor === undefined) return;
    const replaced = lstatSync(join(indexDir, successor)).mtimeMs;
    if (now - replaced < graceMs) return;
    rmSync(join(indexDir, version), { recursive: true, force: true });
    removed.push(version);
  });
  if (removed.length > 0) {
    syncDirectory(indexDir);
    log.info('old index versions removed', { versions: removed.join(' ') });
  }
  return removed;
}
