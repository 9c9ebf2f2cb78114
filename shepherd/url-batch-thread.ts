/**
 * One worker thread preparing inject batches (url-batch.ts) ahead of the
 * thread that owns the URL database: send() hands it a batch, receive()
 * blocks until the oldest batch sent comes back. Blocking (Atomics.wait on a
 * shared counter, then receiveMessageOnPort) keeps the database's callers
 * synchronous, so a batch's transaction is never interleaved with other work
 * of the event loop. The thread is unref'd and ended by close().
 */

import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { BatchRequest, JoinedUrls, PreparedBatch } from './url-batch.js';

function join(urls: readonly string[]): JoinedUrls {
  return { text: urls.join(''), lengths: Uint32Array.from(urls, (url) => url.length) };
}

/** The pieces again (slices of the one string, not copies). */
export function split({ text, lengths }: JoinedUrls): string[] {
  const urls = new Array<string>(lengths.length);
  let at = 0;
  for (let i = 0; i < lengths.length; i++) urls[i] = text.slice(at, (at += lengths[i]!));
  return urls;
}

/** A BatchRequest as it crosses to the worker. */
export interface WireRequest extends JoinedUrls, Omit<BatchRequest, 'urls'> {}

/** A PreparedBatch as it crosses back. */
export interface WireBatch extends JoinedUrls, Omit<PreparedBatch, 'urls'> {}

/** The batch and the buffers to transfer with it (each once: a view's buffer may be shared). */
export function wireBatch({ urls, ...rest }: PreparedBatch): [WireBatch, ArrayBuffer[]] {
  const batch: WireBatch = { ...rest, ...join(urls) };
  const views = [batch.from, batch.depths, batch.footprints, batch.siteOf, batch.halves, batch.order, batch.lengths];
  return [batch, [...new Set(views.map((v) => v.buffer as ArrayBuffer))]];
}

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

  /** Sends a batch to be prepared: its URLs as one string and their lengths (one clone, not one per URL). */
  send({ urls, depths, sources }: BatchRequest): void {
    const message: WireRequest = { ...join(urls), depths, sources };
    this.worker.postMessage(message, [message.lengths.buffer as ArrayBuffer, depths.buffer as ArrayBuffer]);
  }

  /** The oldest batch sent, prepared; blocks the thread until it is. */
  receive(): WireBatch {
    const since = Date.now();
    for (;;) {
      const seen = Atomics.load(this.signal, 0);
      const got = receiveMessageOnPort(this.port) as { message: { batch?: WireBatch; error?: string } } | undefined;
      if (got !== undefined) {
        const { batch, error } = got.message;
        if (batch === undefined) throw new Error(`preparing URLs in a worker thread failed: ${error}`);
        return batch;
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
