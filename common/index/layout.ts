/**
 * Where index versions live (the indexer's indexer/publish.ts writes them;
 * the searcher and the shepherd read them): `state/index/<version>/`, and
 * `state/index/current`, a symlink naming the version to serve.
 */

import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ioError } from '../errors.js';

export const CURRENT = 'current';

export function indexDirectory(state: string): string {
  return join(state, 'index');
}

/** The version `current` names, if any. */
export function currentVersion(indexDir: string): string | undefined {
  try {
    return readlinkSync(join(indexDir, CURRENT));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw ioError(err, join(indexDir, CURRENT), 'reading');
  }
}
