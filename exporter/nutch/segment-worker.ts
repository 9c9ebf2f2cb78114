/**
 * A worker thread of the Nutch export's segment (segment.ts).
 * workerData: SegmentJob. Takes SegmentRequests and answers each order with
 * a SegmentReply, one after the other in the order they came:
 * document lines, `runs` (closes its files, answers with its sorted link
 * runs), linkdb slices; `{close}` ends the thread.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { toThreadError } from '../../common/errors.js';
import { SegmentDocuments, type SegmentJob, type SegmentReply, type SegmentRequest } from './segment.js';

const documents = new SegmentDocuments(workerData as SegmentJob);
let chain = Promise.resolve();
parentPort!.on('message', (message: SegmentRequest) => {
  if ('close' in message) {
    chain = chain.then(() => parentPort!.close());
    return;
  }
  const { seq } = message;
  if (message.spare !== undefined) documents.give(message.spare);
  chain = chain.then(async () => {
    let reply: SegmentReply;
    try {
      if ('runs' in message) {
        reply = { seq, runs: documents.close() };
      } else {
        const batch = 'lines' in message ? await documents.batch(message.lines) : documents.linkSlice(message.slice);
        parentPort!.postMessage({ seq, batch } satisfies SegmentReply, [batch.records.buffer as ArrayBuffer]);
        return;
      }
    } catch (err) {
      reply = { seq, error: toThreadError(err) };
    }
    parentPort!.postMessage(reply);
  });
});
