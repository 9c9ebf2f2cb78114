/**
 * The worker side of parse-pool.ts (and its inline path): the CPU-heavy
 * steps between a response and its store, so that the main thread only adds
 * the bucket header and writes. For every response with ARC content: its ARC
 * record framed (common/archive/arc-write.ts frameArcRecord: one gzip member, the
 * SHA-1 payload digest) and the MD5 of its body; for a document, also the
 * body parsed and deflated as the bucket's body part.
 *
 * A body that cannot be parsed is a `problem`, not a failure: the response is
 * archived and stored all the same.
 */

import { frameArcRecord, type ArcFraming, type ArcRecordInput, type FramedArcRecord } from '../common/archive/arc-write.js';
import { deflatedBody } from '../common/bucket/bucket.js';
import { md5Hex } from '../common/archive/digest.js';
import { documentBody } from '../common/bucket/doc-body.js';
import { isMainThread, workerData } from 'node:worker_threads';
import type { ParsedDocument, Refusal } from './parse.js';
import { parseResponseBody } from './response-body.js';

/** What a worker of parse-pool.ts's documents' pool is told. */
export interface DocumentWorkerData {
  /** Bytes of its isolate's heap and ArrayBuffers past which it leaves. */
  memoryCap: number;
  memoryExit: number;
  everyMs: number;
}

// A worker of parse-pool.ts's documents' pool watches its own isolate's heap and ArrayBuffers (figures
// of this thread alone, unlike the process's size) and leaves past its cap; the pool records why.
const watch = isMainThread ? undefined : (workerData as Partial<DocumentWorkerData> | undefined);
if (watch?.memoryCap !== undefined) {
  const { memoryCap, memoryExit, everyMs } = watch as DocumentWorkerData;
  setInterval(() => {
    const { heapUsed, external } = process.memoryUsage();
    if (heapUsed + external > memoryCap) process.exit(memoryExit);
  }, everyMs).unref();
}

/** What parsing a document needs besides its body. */
export interface ParseRequest {
  url: string;
  headers: readonly (readonly [string, string])[];
  maxDecodedSize: number;
}

export interface PrepareTask {
  /** The response as archived, framed with `framing` (the store's). */
  arc: ArcRecordInput;
  framing: ArcFraming;
  /** The body as received: the end of `arc.content` (a view, so it crosses to a worker once). */
  body: Uint8Array;
  /** Set for a document (ok, too_large): parse the body. */
  parse?: ParseRequest;
}

export interface PrepareResult {
  arc: FramedArcRecord;
  /** MD5 of the body, hex (the bucket's `C`). */
  md5: string;
  parsed?: {
    kind: ParsedDocument['kind'];
    charset?: string;
    /** bucket.ts deflatedBody() of the body attributes. */
    body: Uint8Array;
    refused?: Refusal;
  };
  /** Why the body was not parsed. */
  problem?: string;
}

export async function prepareResponse(task: PrepareTask): Promise<PrepareResult> {
  // Buffers arrive from another thread as plain Uint8Arrays.
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  const result: PrepareResult = { arc: frameArcRecord(task.arc, task.framing), md5: md5Hex(body) };
  return task.parse === undefined ? result : { ...result, ...(await parseForBucket(body, task.parse)) };
}

/** A document's body parsed and deflated as its bucket's body part, or why it could not be (an archive's import parses so too). */
export async function parseForBucket(body: Buffer, parse: ParseRequest): Promise<Pick<PrepareResult, 'parsed' | 'problem'>> {
  try {
    const { doc } = await parseResponseBody({ url: parse.url, headers: parse.headers, body }, parse.maxDecodedSize);
    return {
      parsed: {
        kind: doc.kind,
        ...(doc.charset === undefined ? {} : { charset: doc.charset }),
        body: deflatedBody(documentBody(doc)),
        ...(doc.refused === undefined ? {} : { refused: doc.refused }),
      },
    };
  } catch (err) {
    return { problem: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The worker's entry. A structured clone copies a view's whole ArrayBuffer:
 * zlib's output is a view into a 16 KiB chunk, a small Buffer one into
 * Node's 8 KiB pool. Copied out first, only the bytes cross (a few KiB a
 * page rather than up to 24 KiB).
 */
export default async function prepareInWorker(task: PrepareTask): Promise<PrepareResult> {
  const result = await prepareResponse(task);
  result.arc.bytes = own(result.arc.bytes);
  if (result.parsed !== undefined) result.parsed.body = own(result.parsed.body);
  return result;
}

/** The worker's entry for a body to parse only, its record archived already (an archive's import). */
export async function parseInWorker(task: { body: Uint8Array; parse: ParseRequest }): Promise<Pick<PrepareResult, 'parsed' | 'problem'>> {
  const result = await parseForBucket(Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength), task.parse);
  if (result.parsed !== undefined) result.parsed.body = own(result.parsed.body);
  return result;
}

function own(bytes: Uint8Array): Uint8Array {
  return bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}
