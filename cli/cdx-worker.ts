/**
 * One ARC file's CDX or CDXJ lines in a worker thread (cli/cdx-lines.ts).
 * workerData: CdxJob. Messages to the parent: CdxMessage ('lines' batches,
 * 'problem' per lenient problem, 'failed' with the error that stopped it);
 * the thread ends when the file is done.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { isSherlockError } from '../common/errors.js';
import { batching, cdxLinesOfFile, errorMessage, type CdxJob, type CdxMessage } from './cdx-lines.js';

const post = (message: CdxMessage): void => parentPort!.postMessage(message);

const lines = batching((text) => post({ kind: 'lines', text }));
try {
  cdxLinesOfFile(workerData as CdxJob, lines.add, (problem) => post({ kind: 'problem', problem: errorMessage(problem) }));
  lines.flush();
} catch (err) {
  post({ kind: 'failed', error: isSherlockError(err) ? errorMessage(err) : err instanceof Error ? (err.stack ?? err.message) : String(err) });
}
