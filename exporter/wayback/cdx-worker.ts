/**
 * Parts of ARC files to sorted runs of CDX or CDXJ lines in a worker thread
 * (cdx-lines.ts), and slices of the final merge into the output file.
 * workerData: CdxWorkerData. Orders from the parent (CdxOrder): a part to
 * read, a slice to merge, or the end. Messages to the parent (CdxMessage)
 * per part: 'start' with where reading starts, 'problem' per lenient
 * problem, then 'done' with where it stopped and the part's run files, or
 * 'failed' with the error that stopped it; per slice 'merged' or 'failed'.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { toThreadError } from '../../common/errors.js';
import { ExternalSorter, writeSlice } from '../../common/external-sort.js';
import { cdxLinesOfPart, type CdxMessage, type CdxOrder, type CdxWorkerData } from './cdx-lines.js';

const post = (message: CdxMessage): void => parentPort!.postMessage(message);

const options = workerData as CdxWorkerData;
const sorter = new ExternalSorter({ memoryBudget: options.sortMemory, tmpDir: options.runDir });
const add = (line: string): void => sorter.add(line);
const progress = new Float64Array(options.progress);

const failure = (err: unknown): CdxMessage => ({ kind: 'failed', error: toThreadError(err) });

parentPort!.on('message', (order: CdxOrder) => {
  if (order.kind === 'end') {
    parentPort!.close();
    return;
  }
  if (order.kind === 'merge') {
    try {
      writeSlice(order.slice, order.output.path, order.output.position);
      post({ kind: 'merged' });
    } catch (err) {
      post(failure(err));
    }
    return;
  }
  try {
    const { stop } = cdxLinesOfPart(
      order.part,
      options,
      add,
      (problem) => post({ kind: 'problem', problem: toThreadError(problem) }),
      (start) => post({ kind: 'start', start }),
      progress,
    );
    post({ kind: 'done', stop, runs: sorter.takeRuns() });
  } catch (err) {
    // The lines read so far go to a run no one merges; the parent's sorter removes it with the rest.
    sorter.takeRuns();
    post(failure(err));
  }
});
