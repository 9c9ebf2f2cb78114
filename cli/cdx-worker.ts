/**
 * One ARC file's CDX or CDXJ lines in a worker thread (cli/cdx-lines.ts).
 * workerData: CdxJob. Messages to the parent: CdxMessage ('lines' batches,
 * 'problem' per lenient problem, 'failed' with the error that stopped it);
 * the thread ends when the file is done.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { isSherlockError } from '../common/errors.js';
import { cdxLinesOfFile, errorMessage, type CdxJob, type CdxMessage } from './cdx-lines.js';

const post = (message: CdxMessage): void => parentPort!.postMessage(message);

try {
  cdxLinesOfFile(
    workerData as CdxJob,
    (text) => post({ kind: 'lines', text }),
    (problem) => post({ kind: 'problem', problem: errorMessage(problem) }),
  );
} catch (err) {
  post({ kind: 'failed', error: isSherlockError(err) ? errorMessage(err) : err instanceof Error ? (err.stack ?? err.message) : String(err) });
}
