/**
 * A bucket writer to be killed: run as `node bucket-writer-child.js FILE MODE SEED`.
 *
 * It opens a BucketWriter on FILE (repairing what the last victim left) and
 * appends bucketPayload(SEED, i) for i = 0, 1, …, printing `ack OID I` on stdout
 * after each append or commit returns, with a blocking write(2) on fd 1
 * (process.stdout may still hold a line in user space when SIGKILL lands), so
 * every line the parent reads is an acknowledged bucket.
 *
 * MODE `loop`: appends until killed, every third bucket streamed in chunks.
 * MODE `stream`: appends three buckets, prints `streaming OID`, then streams
 * one endless bucket in 64 KiB chunks with pauses, never committing.
 */

import { writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { BucketWriter } from '../../common/bucket/file.js';
import { bucketPayload } from './bucket-payload.js';

const [file, mode, seedText] = process.argv.slice(2);
if (file === undefined || (mode !== 'loop' && mode !== 'stream') || seedText === undefined) {
  process.stderr.write('usage: bucket-writer-child FILE loop|stream SEED\n');
  process.exit(2);
}
const seed = Number(seedText);
const writer = BucketWriter.open(file);
// A child nobody kills must not run forever.
const deadline = Date.now() + 20_000;

// Made before the first append, so that the loop spends its time writing and a
// random kill most often lands inside a write.
const prepared = Array.from({ length: 100 }, (_, index) => bucketPayload(seed, index));

function appendOne(index: number, streamed: boolean): void {
  const { type, data } = prepared[index] ?? bucketPayload(seed, index);
  let oid: number;
  if (streamed) {
    const stream = writer.begin(type);
    for (let at = 0; at < data.length; at += 7000) stream.write(data.subarray(at, at + 7000));
    oid = stream.commit();
  } else {
    oid = writer.append(type, data);
  }
  writeSync(1, `ack ${oid} ${index}\n`);
}

if (mode === 'loop') {
  for (let index = 0; Date.now() < deadline; index++) appendOne(index, index % 3 === 2);
} else {
  for (let index = 0; index < 3; index++) appendOne(index, false);
  const stream = writer.begin(bucketPayload(seed, 3).type);
  writeSync(1, `streaming ${stream.oid}\n`);
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  while (Date.now() < deadline) {
    stream.write(chunk);
    await sleep(2);
  }
}
process.exit(3);
