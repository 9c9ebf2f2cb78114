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

/** A PreparedBatch as it crosses back: its URLs as ASCII bytes and their lengths, so no string outlives the batch on either side. */
export interface WireBatch extends JoinedUrls, Omit<PreparedBatch, 'urls'> {}

/**
 * A BatchRequest as it crosses to the worker: its URLs as UTF-8 in a buffer
 * shared by the two threads, and their lengths in bytes. An array of 100,000
 * strings, cloned one by one, left its garbage on the database thread's heap
 * (peak RSS at 10 million URLs 1,007 against 989 MiB with the buffer;
 * docs/decisions.md, Shepherd). One buffer serves every batch: the owner
 * writes the next request only after receive() has taken the last answer,
 * and the worker has read its request before it answers.
 */
export interface WireRequest extends Omit<BatchRequest, 'urls'> {
  shared: SharedArrayBuffer;
  lengths: Uint32Array;
}

/** The request's URLs, read back out of the shared buffer. */
export function requestFromWire({ shared, lengths, ...rest }: WireRequest): BatchRequest {
  const bytes = Buffer.from(shared);
  const urls = new Array<string>(lengths.length);
  let at = 0;
  for (let i = 0; i < lengths.length; i++) urls[i] = bytes.toString('utf8', at, (at += lengths[i]!));
  return { ...rest, urls };
}

/** The batch and the buffers to transfer with it (each once: a view's buffer may be shared). */
export function wireBatch({ urls, ...rest }: PreparedBatch): [WireBatch, ArrayBuffer[]] {
  const lengths = Uint32Array.from(urls, (url) => url.length);
  // Own memory, not the shared pool of small Buffers: it is transferred.
  const text = Buffer.allocUnsafeSlow(lengths.reduce((sum, n) => sum + n, 0));
  let at = 0;
  for (const url of urls) at += text.write(url, at, 'latin1');
  const batch: WireBatch = { ...rest, text, lengths };
  const views = [batch.from, batch.depths, batch.footprints, batch.siteOf, batch.halves, batch.order, lengths, text];
  return [batch, [...new Set(views.map((v) => v.buffer as ArrayBuffer))]];
}

/**
 * The thread's heap is capped, or it grows lazily (a 10M-URL inject peaked at
 * 1.27 GB with it uncapped, 0.97 GiB capped at 128 MB). The cap is fatal to the
 * thread, and receive() cannot see the thread die while it blocks, so only
 * batches whose URLs are small enough to fit with room to spare go there; the
 * others are prepared on the calling thread, as without a worker.
 */
const HEAP_MB = 128;
const MAX_URL_BYTES = 8 * 1024 * 1024;

/** The UTF-16 units of a batch's URLs: what fitsThread judges and send() makes room for. */
export function urlUnits(request: BatchRequest): number {
  let units = 0;
  for (const url of request.urls) units += url.length;
  return units;
}

/** Whether a batch of `units` (urlUnits) may be prepared in the worker thread (its URLs are well inside the thread's heap). */
export function fitsThread(units: number): boolean {
  return units <= MAX_URL_BYTES;
}

/** How long receive() waits for a batch before deciding the thread is gone. */
const REPLY_TIMEOUT_MS = 10 * 60_000;

export class BatchThread {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  /** The requests' URLs (WireRequest); replaced by a larger one when a batch does not fit. */
  private shared = new SharedArrayBuffer(1 << 20);

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.worker = new Worker(new URL('./url-batch-worker.js', import.meta.url), {
      workerData: { port: port2, signal: this.signal },
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
    });
    this.worker.unref();
    this.port = port1;
  }

  /** Hands the thread a batch of `units` (urlUnits); at most one may be out at a time (send, receive, send…). */
  send({ urls, ...rest }: BatchRequest, units: number): void {
    const room = 3 * units; // UTF-8 bytes of a UTF-16 unit, at most
    if (room > this.shared.byteLength) this.shared = new SharedArrayBuffer(room);
    const bytes = Buffer.from(this.shared);
    const lengths = new Uint32Array(urls.length);
    let at = 0;
    for (let i = 0; i < urls.length; i++) at += lengths[i] = bytes.write(urls[i]!, at, 'utf8');
    const wire: WireRequest = { ...rest, shared: this.shared, lengths };
    this.worker.postMessage(wire, [wire.depths.buffer as ArrayBuffer, lengths.buffer]);
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
