/** The seed file a gathering peer is given (`SEEDS_FILE` of its command line): its loopback URLs, one a line. */

import { readFileSync } from 'node:fs';

export function readSeeds(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('http://127.'));
}
