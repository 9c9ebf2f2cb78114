/**
 * Parts of ARC files to CDX or CDXJ lines in a worker thread
 * (cli/cdx-lines.ts). workerData: CdxWorkerData. Orders from the parent
 * (CdxOrder): a part to read, or the end. Messages to the parent (CdxMessage)
 * per part: 'start' with where reading starts, 'lines' batches, 'problem' per
 * lenient problem, then 'done' with where it stopped or 'failed' with the
 * error that stopped it. It waits while IN_FLIGHT batches are posted and not
 * yet taken (`taken`).
 */

import { parentPort, workerData } from 'node:worker_threads';
import { isSherlockError } from '../common/errors.js';
import { batching, cdxLinesOfPart, errorMessage, IN_FLIGHT, type CdxMessage, type CdxOrder, type CdxWorkerData } from './cdx-lines.js';

const post = (message: CdxMessage): void => parentPort!.postMessage(message);

const options = workerData as CdxWorkerData;
const taken = options.taken;
let posted = 0;
const lines = batching((text) => {
  for (let seen = Atomics.load(taken, 0); posted - seen >= IN_FLIGHT; seen = Atomics.load(taken, 0)) Atomics.wait(taken, 0, seen);
  post({ kind: 'lines', text });
  posted += 1;
});

parentPort!.on('message', (order: CdxOrder) => {
  if (order.kind === 'end') {
    parentPort!.close();
    return;
  }
  try {
    const { stop } = cdxLinesOfPart(
      order.part,
      options,
      lines.add,
      (problem) => post({ kind: 'problem', problem: errorMessage(problem) }),
      (start) => post({ kind: 'start', start }),
    );
    lines.flush();
    post({ kind: 'done', stop });
  } catch (err) {
    lines.flush();
    post({ kind: 'failed', error: isSherlockError(err) ? errorMessage(err) : err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
});
