/**
 * The ARC files an export reads and how it reads them: the crawl's finished
 * files (`<state>/gather/arc`, `.open` ones skipped, in name order) or any
 * list given, read strictly (the first damage throws, naming the file and
 * offset) or leniently as pywb does (each problem handed to the caller and
 * counted, every readable record kept).
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { arcDir } from '../../common/archive/arc-place.js';
import { sniffArchive } from '../../common/archive/archive-read.js';
import { ArcReader } from '../../common/archive/arc-read.js';
import { ioError, SherlockError } from '../../common/errors.js';

/** The finished ARC files of the crawl in `state`, in name order. */
export function crawlArcFiles(state: string): string[] {
  const dir = arcDir(state);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw ioError(err, dir, 'listing ARC files');
  }
  return names
    .filter((name) => /\.arc(\.gz)?$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Records of one file after another, strict or lenient; lenient reading's problems go to `onProblem` and are counted. */
export class ArcInput {
  problems = 0;

  constructor(
    readonly lenient: boolean,
    private readonly onProblem: (problem: SherlockError) => void,
  ) {}

  /** A reader of one ARC file, strict or lenient; the caller closes it. A WARC file is a usage error, not damage. */
  open(path: string): ArcReader {
    if (sniffArchive(path) === 'warc') throw new SherlockError('SHERLOCK_USAGE', 'a WARC file: export warc converts ARC files', { file: path });
    return ArcReader.open(path, this.lenient ? { onProblem: (problem) => this.report(problem) } : {});
  }

  report(problem: SherlockError): void {
    this.problems += 1;
    this.onProblem(problem);
  }
}
