/**
 * The worker thread of url-batch-thread.ts: prepares each batch it is sent
 * (url-batch.ts) and answers on the port it was given, in the order asked,
 * then bumps the shared counter the owning thread may be blocked on. It
 * touches no file: a crash loses nothing but the batch in hand.
 */

import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { SiteHalves, prepareBatch } from './url-batch.js';
import { requestFromWire, wireBatch, type WireRequest } from './url-batch-thread.js';

const { port, signal } = workerData as { port: MessagePort; signal: Int32Array };
const halves = new SiteHalves();

parentPort!.on('message', (request: WireRequest) => {
  try {
    const [batch, transfer] = wireBatch(prepareBatch(requestFromWire(request), halves));
    port.postMessage({ batch }, transfer);
  } catch (err) {
    port.postMessage({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
});
