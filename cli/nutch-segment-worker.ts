/**
 * A worker thread of the Nutch export's segment (cli/nutch-segment.ts).
 * workerData: SegmentJob. Takes `{seq, lines}` messages, answers each with a
 * SegmentReply, one batch after the other in the order they came; `{close}`
 * closes its files, answers with its sorted link runs and ends the thread.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { toThreadError } from '../common/errors.js';
import { SegmentDocuments, type SegmentJob, type SegmentReply, type SegmentRequest } from './nutch-segment.js';

const documents = new SegmentDocuments(workerData as SegmentJob);
let chain = Promise.resolve();
parentPort!.on('message', (message: SegmentRequest) => {
  if ('close' in message) {
    chain = chain.then(() => {
      parentPort!.postMessage({ runs: documents.close() } satisfies SegmentReply);
      parentPort!.close();
    });
    return;
  }
  const { seq, lines } = message;
  chain = chain.then(async () => {
    let reply: SegmentReply;
    try {
      const batch = await documents.batch(lines);
      parentPort!.postMessage({ seq, batch } satisfies SegmentReply, [batch.records.buffer as ArrayBuffer]);
      return;
    } catch (err) {
      reply = { seq, error: toThreadError(err) };
    }
    parentPort!.postMessage(reply);
  });
});
