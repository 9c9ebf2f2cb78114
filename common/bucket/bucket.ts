/**
 * Buckets: Sherlock's objects and their four encodings (seed 003, "Buckets";
 * libucw's sherlock/object.h and obj2buck.c).
 *
 * An object is an ordered list of items: attributes (a one-byte name and a
 * byte-string value) and named child objects. Names are one-character strings
 * holding one byte (code 0–255); '(' and ')' are reserved for nesting. A bucket
 * is a header object and a body object.
 *
 * Every encoding is a sequence of attributes. A child is written, as libucw's
 * bput_attr_push/pop do, as an attribute '(' whose value is the child's one-byte
 * name, then the child's items, then an attribute ')' with an empty value.
 *
 *   PLAIN        0x80000000  body only; per attribute: name, value, LF
 *   V3.0         0x80000001  header as PLAIN, LF, body as PLAIN
 *   V3.3         0x80000002  header sequence, 0x00, body sequence; per attribute:
 *                            varint(value length + 1), value, name
 *   V3.3 deflate 0x80000003  header sequence, 0x00, u32 body length, u32 Adler-32
 *                            of the body, body sequence as raw deflate
 *
 * The varint is libucw's utf8_32 scheme: a number below 2^31 written as a
 * 1–6 byte UTF-8 sequence, so the first byte of an attribute is never 0 and the
 * 0x00 separator is unambiguous. We write and accept only the shortest form.
 *
 * The V3.3 deflate type replaces the original's Lizard (V33_LIZARD) with raw
 * deflate under the same layout. The original wrote its two u32s with PUT_U32,
 * the CPU's byte order; we fix them to little-endian, like every u32 of the
 * bucket file. The original fell back to plain V3.3 when compression did not
 * pay (images, tiny bodies); here that choice is the caller's. Textual encodings cannot hold an LF in a value or a name: the
 * encoders refuse such objects (RangeError naming the attribute) rather than
 * corrupt them.
 *
 * Decoders distrust every byte. Every failure is a SherlockError
 * SHERLOCK_CORRUPT_BUCKET whose offset is the byte inside the bucket where
 * decoding failed, or, when the caller passes where the bucket lies in a file,
 * that file and the absolute offset. Decoded values are views into the input
 * buffer, not copies.
 */

import { SherlockError, type ErrorPlace } from '../errors.js';
import { adler32 as adler32ByPath } from '../deflate/libdeflate.js';
import { RawDeflater } from '../deflate/raw-deflate.js';
import { RawInflater } from '../deflate/raw-inflate.js';

export const BUCKET_TYPE = {
  PLAIN: 0x80000000,
  V30: 0x80000001,
  V33: 0x80000002,
  V33_DEFLATE: 0x80000003,
} as const;

export type BucketType = (typeof BUCKET_TYPE)[keyof typeof BUCKET_TYPE];

const TYPE_NAMES: Record<BucketType, string> = {
  [BUCKET_TYPE.PLAIN]: 'plain',
  [BUCKET_TYPE.V30]: 'v3.0',
  [BUCKET_TYPE.V33]: 'v3.3',
  [BUCKET_TYPE.V33_DEFLATE]: 'v3.3-deflate',
};

export function isBucketType(type: number): type is BucketType {
  return Object.hasOwn(TYPE_NAMES, type);
}

/** "v3.3" for a known type, "0x…" for any other. */
export function bucketTypeName(type: number): string {
  return isBucketType(type) ? TYPE_NAMES[type] : `0x${type.toString(16).padStart(8, '0')}`;
}

/** Children nested deeper than this are refused when decoding (they would only come from damage). */
export const MAX_DEPTH = 64;
/** A deflated body longer than this is neither written nor inflated (a damaged length must not exhaust memory). */
export const MAX_BODY_LENGTH = 1 << 30;

const OPEN = 0x28; // '('
const CLOSE = 0x29; // ')'
const LF = 0x0a;

export type Item =
  | { readonly name: string; readonly value: Buffer; readonly child?: undefined }
  | { readonly name: string; readonly child: BucketObject; readonly value?: undefined };

export class BucketObject {
  readonly items: Item[];

  constructor(items: Item[] = []) {
    this.items = items;
  }

  /** Appends an attribute; a string value is stored as UTF-8. */
  add(name: string, value: string | Uint8Array): this {
    nameByte(name, false);
    this.items.push({ name, value: toBuffer(value) });
    return this;
  }

  addChild(name: string, child: BucketObject): this {
    nameByte(name, true);
    this.items.push({ name, child });
    return this;
  }

  /** The first value of an attribute. */
  first(name: string): Buffer | undefined {
    return this.items.find((item) => item.name === name && item.value !== undefined)?.value;
  }

  /** The first value of an attribute decoded as UTF-8. */
  string(name: string): string | undefined {
    return this.first(name)?.toString('utf8');
  }

  /** Every value of an attribute, in order. */
  all(name: string): Buffer[] {
    return this.items.flatMap((item) => (item.name === name && item.value !== undefined ? [item.value] : []));
  }

  /** Every child object of that name, in order. */
  children(name: string): BucketObject[] {
    return this.items.flatMap((item) => (item.name === name && item.child !== undefined ? [item.child] : []));
  }
}

export interface Bucket {
  header: BucketObject;
  body: BucketObject;
}

function toBuffer(value: string | Uint8Array): Buffer {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function nameByte(name: string, child: boolean): number {
  const code = name.charCodeAt(0);
  if (name.length !== 1 || code > 0xff || (!child && (code === OPEN || code === CLOSE))) {
    throw new RangeError(`bad attribute name ${JSON.stringify(name)}: one byte other than '(' and ')' expected`);
  }
  return code;
}

// ---------------------------------------------------------------- varint

const VARINT_LIMIT = 0x80000000;
/** Smallest value that needs n bytes (index n). */
const VARINT_MIN = [0, 0, 0x80, 0x800, 0x10000, 0x200000, 0x4000000];
const VARINT_LEAD = [0, 0, 0xc0, 0xe0, 0xf0, 0xf8, 0xfc];

export function varintSize(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value >= VARINT_LIMIT) {
    throw new RangeError(`varint out of range: ${value}`);
  }
  let n = 1;
  while (n < 6 && value >= VARINT_MIN[n + 1]!) n++;
  return n;
}

/** Writes `value` (0 ≤ value < 2^31) at `pos`; returns the position after it. */
export function putVarint(out: Uint8Array, pos: number, value: number): number {
  const n = varintSize(value);
  if (n === 1) {
    out[pos] = value;
    return pos + 1;
  }
  out[pos] = VARINT_LEAD[n]! | (value >>> (6 * (n - 1)));
  for (let i = 1; i < n; i++) out[pos + i] = 0x80 | ((value >>> (6 * (n - 1 - i))) & 0x3f);
  return pos + n;
}

export function encodeVarint(value: number): Buffer {
  const out = Buffer.alloc(varintSize(value));
  putVarint(out, 0, value);
  return out;
}

/**
 * Reads a varint at `pos`, not past `end`. Errors give offsets relative to the
 * buffer; decodeBucket adds the bucket's place.
 */
export function decodeVarint(data: Uint8Array, pos: number, end = data.length): { value: number; next: number } {
  const lead = data[pos];
  if (pos >= end || lead === undefined) throw corrupt(pos, 'length expected, end of data found');
  if (lead < 0x80) return { value: lead, next: pos + 1 };
  if (lead < 0xc0 || lead >= 0xfe) throw corrupt(pos, `length cannot start with byte 0x${hex2(lead)}`);
  let n = 2;
  while (n < 6 && lead >= VARINT_LEAD[n + 1]!) n++;
  if (pos + n > end) throw corrupt(pos, `length of ${n} bytes runs past the end`);
  let value = lead & (0x7f >> n);
  for (let i = 1; i < n; i++) {
    const byte = data[pos + i]!;
    if ((byte & 0xc0) !== 0x80) throw corrupt(pos + i, `bad continuation byte 0x${hex2(byte)} in a length`);
    value = value * 64 + (byte & 0x3f);
  }
  if (value < VARINT_MIN[n]!) throw corrupt(pos, `overlong ${n}-byte length ${value}`);
  return { value, next: pos + n };
}

// ---------------------------------------------------------------- Adler-32

/** Adler-32 (RFC 1950 §8.2), which node:zlib does not export: libdeflate's, vectorised (0.03 ms a MB), or without the binding a TypeScript loop (common/deflate/libdeflate.ts). */
export function adler32(data: Uint8Array): number {
  return adler32ByPath(data);
}

// ---------------------------------------------------------------- encoding

/** The attribute sequence of an object, children flattened into '(' … ')' attributes. */
function flatten(object: BucketObject, out: Array<[number, Buffer]> = []): Array<[number, Buffer]> {
  for (const item of object.items) {
    if (item.child === undefined) {
      out.push([nameByte(item.name, false), item.value]);
    } else {
      out.push([OPEN, Buffer.of(nameByte(item.name, true))]);
      flatten(item.child, out);
      out.push([CLOSE, Buffer.alloc(0)]);
    }
  }
  return out;
}

/** One object as a V3.3 sequence (no separator). */
function encodeV33(object: BucketObject): Buffer {
  const attrs = flatten(object);
  let size = 0;
  for (const [, value] of attrs) size += varintSize(value.length + 1) + value.length + 1;
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const [name, value] of attrs) {
    pos = putVarint(out, pos, value.length + 1);
    pos += value.copy(out, pos);
    out[pos++] = name;
  }
  return out;
}

/** One object as textual lines (no separator). */
function encodeText(object: BucketObject): Buffer {
  const attrs = flatten(object);
  let size = 0;
  for (const [name, value] of attrs) {
    if (name === LF || value.includes(LF)) {
      throw new RangeError(`attribute ${JSON.stringify(String.fromCharCode(name))}: PLAIN and V3.0 buckets cannot hold an LF`);
    }
    size += value.length + 2;
  }
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const [name, value] of attrs) {
    out[pos++] = name;
    pos += value.copy(out, pos);
    out[pos++] = LF;
  }
  return out;
}

/** A bucket's bytes in one of the four encodings. PLAIN has no header: it must be empty. */
export function encodeBucket(type: BucketType, bucket: Bucket): Buffer {
  switch (type) {
    case BUCKET_TYPE.PLAIN:
      if (bucket.header.items.length > 0) throw new RangeError('a PLAIN bucket has no header');
      return encodeText(bucket.body);
    case BUCKET_TYPE.V30:
      return Buffer.concat([encodeText(bucket.header), Buffer.of(LF), encodeText(bucket.body)]);
    case BUCKET_TYPE.V33:
      return Buffer.concat([encodeV33(bucket.header), Buffer.of(0), encodeV33(bucket.body)]);
    case BUCKET_TYPE.V33_DEFLATE:
      return encodeDeflatedBucket(bucket.header, deflatedBody(bucket.body));
  }
}

const bodyDeflater = new RawDeflater(1);

/**
 * The part of a V3.3-deflate bucket after the header: the 0x00 separator,
 * the body's length and Adler-32, then the body raw-deflated (zlib level 1:
 * the original used the fast Lizard for the same reason). Separate so that a
 * worker thread can prepare it; encodeDeflatedBucket() adds the header.
 */
export function deflatedBody(body: BucketObject): Buffer {
  const plain = encodeV33(body);
  if (plain.length > MAX_BODY_LENGTH) throw new RangeError(`body of ${plain.length} bytes over the limit of ${MAX_BODY_LENGTH}`);
  const deflated = bodyDeflater.deflate(plain);
  const lengths = Buffer.alloc(9);
  lengths.writeUInt32LE(plain.length, 1);
  lengths.writeUInt32LE(bodyDeflater.adler32, 5);
  return Buffer.concat([lengths, deflated]);
}

/** A V3.3-deflate bucket from its header and a body made by deflatedBody(). */
export function encodeDeflatedBucket(header: BucketObject, body: Buffer): Buffer {
  return Buffer.concat([encodeV33(header), body]);
}

// ---------------------------------------------------------------- decoding

function corrupt(offset: number, message: string): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_BUCKET', message, { offset });
}

function hex2(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}

/**
 * Decodes one attribute sequence from `pos` up to `end`. A header stops at its
 * separator (0x00 for V3.3, an empty line for textual) and `next` points past
 * it; a body runs to `end`.
 */
function decodeSequence(data: Buffer, pos: number, end: number, textual: boolean, header: boolean): { object: BucketObject; next: number } {
  const root = new BucketObject();
  const stack: Array<{ object: BucketObject; opened: number }> = [{ object: root, opened: pos }];
  let separated = false;
  while (pos < end) {
    const start = pos;
    let name: number;
    let value: Buffer;
    if (textual) {
      if (data[pos] === LF) {
        if (!header) throw corrupt(pos, 'empty line in a body');
        separated = true;
        pos++;
        break;
      }
      const lf = data.indexOf(LF, pos);
      if (lf < 0 || lf >= end) throw corrupt(pos, 'attribute not ended by LF');
      name = data[pos]!;
      value = data.subarray(pos + 1, lf);
      pos = lf + 1;
    } else {
      if (data[pos] === 0) {
        if (!header) throw corrupt(pos, 'separator 0x00 in a body');
        separated = true;
        pos++;
        break;
      }
      const { value: length, next } = decodeVarint(data, pos, end);
      if (length > end - next) throw corrupt(pos, `attribute of ${length - 1} bytes runs past the end`);
      value = data.subarray(next, next + length - 1);
      name = data[next + length - 1]!;
      pos = next + length;
    }
    const top = stack[stack.length - 1]!.object;
    if (name === OPEN) {
      if (value.length !== 1) throw corrupt(start, `child opener '(' holds ${value.length} bytes, not one name`);
      if (stack.length > MAX_DEPTH) throw corrupt(start, `children nested deeper than ${MAX_DEPTH}`);
      const child = new BucketObject();
      top.items.push({ name: String.fromCharCode(value[0]!), child });
      stack.push({ object: child, opened: start });
    } else if (name === CLOSE) {
      if (value.length !== 0) throw corrupt(start, `child closer ')' holds ${value.length} bytes`);
      if (stack.length === 1) throw corrupt(start, "')' without a matching '('");
      stack.pop();
    } else {
      top.items.push({ name: String.fromCharCode(name), value });
    }
  }
  if (header && !separated) throw corrupt(pos, 'header not ended by its separator');
  if (stack.length > 1) throw corrupt(stack[stack.length - 1]!.opened, "child '(' never closed");
  return { object: root, next: pos };
}

// Synchronous use only: one engine for every body of the process.
const bodyInflater = new RawInflater();

function decodeDeflated(data: Buffer, pos: number): BucketObject {
  if (data.length - pos < 8) throw corrupt(pos, 'body length and Adler-32 missing');
  const length = data.readUInt32LE(pos);
  const checksum = data.readUInt32LE(pos + 4);
  if (length > MAX_BODY_LENGTH) throw corrupt(pos, `body length ${length} over the limit of ${MAX_BODY_LENGTH}`);
  const compressed = data.subarray(pos + 8);
  let body: Buffer;
  try {
    const inflated = bodyInflater.inflate(compressed, Math.max(length, 1));
    if (inflated === undefined) throw new Error('unexpected end of file');
    if (inflated.consumed !== compressed.length) {
      throw new Error(`${compressed.length - inflated.consumed} bytes after the end of the stream`);
    }
    body = inflated.data;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new SherlockError('SHERLOCK_CORRUPT_BUCKET', `deflated body: ${detail}`, { offset: pos + 8 }, { cause: err });
  }
  if (body.length !== length) throw corrupt(pos, `body inflates to ${body.length} bytes, ${length} recorded`);
  const actual = adler32(body);
  if (actual !== checksum) {
    throw corrupt(pos + 4, `body Adler-32 is 0x${actual.toString(16)}, 0x${checksum.toString(16)} recorded`);
  }
  try {
    return decodeSequence(body, 0, body.length, false, false).object;
  } catch (err) {
    if (!(err instanceof SherlockError)) throw err;
    // Offsets inside the inflated body are not file offsets: name the compressed data.
    throw corrupt(pos + 8, `inflated body at byte ${err.place.offset ?? 0}: ${err.message}`);
  }
}

/**
 * Decodes a bucket of `type`. `at` says where the bucket's data lies (file and
 * offset of its first byte), so that errors name the place in the file.
 */
export function decodeBucket(type: number, data: Uint8Array, at: ErrorPlace = {}): Bucket {
  const buffer = toBuffer(data);
  try {
    switch (type) {
      case BUCKET_TYPE.PLAIN:
        return { header: new BucketObject(), body: decodeSequence(buffer, 0, buffer.length, true, false).object };
      case BUCKET_TYPE.V30:
      case BUCKET_TYPE.V33: {
        const textual = type === BUCKET_TYPE.V30;
        const header = decodeSequence(buffer, 0, buffer.length, textual, true);
        return { header: header.object, body: decodeSequence(buffer, header.next, buffer.length, textual, false).object };
      }
      case BUCKET_TYPE.V33_DEFLATE: {
        const header = decodeSequence(buffer, 0, buffer.length, false, true);
        return { header: header.object, body: decodeDeflated(buffer, header.next) };
      }
      default:
        throw corrupt(0, `unknown bucket type ${bucketTypeName(type)}`);
    }
  } catch (err) {
    if (!(err instanceof SherlockError) || (at.file === undefined && at.offset === undefined)) throw err;
    const place = { ...at, offset: (at.offset ?? 0) + (err.place.offset ?? 0) };
    throw new SherlockError(err.code, err.message, place, { cause: err.cause });
  }
}

/**
 * The header object alone, the body left undecoded (not inflated): for
 * readers that choose buckets by their header before reading bodies.
 */
export function decodeBucketHeader(type: number, data: Uint8Array, at: ErrorPlace = {}): BucketObject {
  if (type !== BUCKET_TYPE.V33 && type !== BUCKET_TYPE.V33_DEFLATE) return decodeBucket(type, data, at).header;
  const buffer = toBuffer(data);
  try {
    return decodeSequence(buffer, 0, buffer.length, false, true).object;
  } catch (err) {
    if (!(err instanceof SherlockError)) throw err;
    throw new SherlockError(err.code, err.message, { ...at, offset: (at.offset ?? 0) + (err.place.offset ?? 0) }, { cause: err.cause });
  }
}

// ---------------------------------------------------------------- linearized objects

/**
 * A linearized object (seed 003): one byte, the type minus PLAIN, then a V3.3
 * bucket with an empty header holding the object as its body. It needs no
 * metadata but its length.
 */
export function linearize(type: typeof BUCKET_TYPE.V33 | typeof BUCKET_TYPE.V33_DEFLATE, object: BucketObject): Buffer {
  return Buffer.concat([Buffer.of(type - BUCKET_TYPE.PLAIN), encodeBucket(type, { header: new BucketObject(), body: object })]);
}

export function delinearize(data: Uint8Array, at: ErrorPlace = {}): BucketObject {
  const buffer = toBuffer(data);
  const type = BUCKET_TYPE.PLAIN + (buffer[0] ?? 0);
  if (buffer.length === 0 || (type !== BUCKET_TYPE.V33 && type !== BUCKET_TYPE.V33_DEFLATE)) {
    const place = { ...at, offset: at.offset ?? 0 };
    throw new SherlockError('SHERLOCK_CORRUPT_BUCKET', `linearized object of type ${bucketTypeName(type)}`, place);
  }
  const bucket = decodeBucket(type, buffer.subarray(1), { ...at, offset: (at.offset ?? 0) + 1 });
  if (bucket.header.items.length > 0) {
    throw new SherlockError('SHERLOCK_CORRUPT_BUCKET', 'linearized object with a header', { ...at, offset: (at.offset ?? 0) + 1 });
  }
  return bucket.body;
}
