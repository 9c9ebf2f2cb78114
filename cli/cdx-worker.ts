/**
 * One ARC file's CDX or CDXJ lines in a worker thread (cli/cdx-lines.ts).
 * workerData: CdxJob. Messages to the parent: CdxMessage ('lines' batches,
 * 'problem' per lenient problem, 'failed' with the error that stopped it);
 * the thread ends when the file is done. It waits while IN_FLIGHT batches
 * are posted and not yet taken (`job.taken`).
 */

import { parentPort, workerData } from 'node:worker_threads';
import { isSherlockError } from '../common/errors.js';
import { batching, cdxLinesOfFile, errorMessage, IN_FLIGHT, type CdxJob, type CdxMessage } from './cdx-lines.js';

const post = (message: CdxMessage): void => parentPort!.postMessage(message);

const job = workerData as CdxJob;
const taken = job.taken!;
let posted = 0;
const lines = batching((text) => {
  for (let seen = Atomics.load(taken, 0); posted - seen >= IN_FLIGHT; seen = Atomics.load(taken, 0)) Atomics.wait(taken, 0, seen);
  post({ kind: 'lines', text });
  posted += 1;
});
try {
  cdxLinesOfFile(job, lines.add, (problem) => post({ kind: 'problem', problem: errorMessage(problem) }));
  lines.flush();
} catch (err) {
  post({ kind: 'failed', error: isSherlockError(err) ? errorMessage(err) : err instanceof Error ? (err.stack ?? err.message) : String(err) });
}
