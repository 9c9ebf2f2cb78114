/**
 * One worker thread preparing inject batches (url-batch.ts) ahead of the
 * thread that owns the URL database: send() hands it a batch, receive()
 * blocks until the oldest batch sent comes back. Blocking (Atomics.wait on a
 * shared counter, then receiveMessageOnPort) keeps the database's callers
 * synchronous, so a batch's transaction is never interleaved with other work
 * of the event loop. The thread is unref'd and ended by close().
 */

import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { BatchRequest, PreparedBatch } from './url-batch.js';

/** How long receive() waits for a batch before deciding the thread is gone. */
const REPLY_TIMEOUT_MS = 10 * 60_000;

export class BatchThread {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.worker = new Worker(new URL('./url-batch-worker.js', import.meta.url), {
      workerData: { port: port2, signal: this.signal },
      transferList: [port2],
    });
    this.worker.unref();
    this.port = port1;
  }

  send(request: BatchRequest): void {
    this.worker.postMessage(request, [request.depths.buffer as ArrayBuffer]);
  }

  /** The oldest batch sent, prepared; blocks the thread until it is. */
  receive(): PreparedBatch {
    const since = Date.now();
    for (;;) {
      const seen = Atomics.load(this.signal, 0);
      const got = receiveMessageOnPort(this.port) as { message: { batch?: PreparedBatch; error?: string } } | undefined;
      if (got !== undefined) {
        if (got.message.batch === undefined) throw new Error(`preparing URLs in a worker thread failed: ${got.message.error}`);
        return got.message.batch;
      }
      if (Date.now() - since > REPLY_TIMEOUT_MS) throw new Error(`the URL-preparing worker thread has not answered in ${REPLY_TIMEOUT_MS / 1000} s`);
      Atomics.wait(this.signal, 0, seen, 1000);
    }
  }

  close(): void {
    this.port.close();
    void this.worker.terminate();
  }
}
