/**
 * Whether published index versions are whole: the engine of `sherlock index
 * verify` (cli/index.ts prints the problems and the summary). Each file the
 * version's Manifest lists is checked against its size and CRC-32
 * (common/index/manifest.ts); a file that differs is then read through its own
 * format (dump.ts) so that the problem names an offset where the reader can
 * tell one. Reads only; a damaged version is reported, never touched.
 */

import { join } from 'node:path';
import { SherlockError } from '../common/errors.js';
import { CURRENT, currentVersion, indexDirectory } from '../common/index/layout.js';
import { checkIndexDir } from '../common/index/manifest.js';
import { dumpIndexFile } from './dump.js';
import { publishedVersions } from './publish.js';

/** One version checked: how many files its Manifest lists and what is wrong with them. */
export interface VersionCheck {
  version: string;
  /** Whether `current` names it. */
  current: boolean;
  files: number;
  problems: SherlockError[];
}

/**
 * The version `current` names, or every published version with `all`, one
 * at a time; throws SHERLOCK_NOT_FOUND when there is no current version.
 */
export function* verifyIndex(state: string, all: boolean): Iterable<VersionCheck> {
  const dir = indexDirectory(state);
  const current = currentVersion(dir);
  if (current === undefined) throw new SherlockError('SHERLOCK_NOT_FOUND', 'no current index version', { file: join(dir, CURRENT) });
  for (const version of all ? publishedVersions(dir) : [current]) {
    const problems: SherlockError[] = [];
    let files = 0;
    try {
      const checked = checkIndexDir(join(dir, version));
      files = checked.manifest.files.length;
      problems.push(...checked.problems.map(locate));
    } catch (err) {
      if (!(err instanceof SherlockError)) throw err;
      problems.push(err);
    }
    yield { version, current: version === current, files, problems };
  }
}

/** The manifest says a file differs; its own reader (the one `index dump` uses) tells where, if it can. */
function locate(problem: SherlockError): SherlockError {
  const file = problem.place.file;
  if (file === undefined || problem.code !== 'SHERLOCK_CORRUPT_INDEX') return problem;
  try {
    for (const record of dumpIndexFile(file)) void record;
  } catch (err) {
    if (err instanceof SherlockError && err.place.offset !== undefined) return err;
  }
  return problem;
}
