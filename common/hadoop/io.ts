/**
 * Hadoop's primitive serialisations (Java `DataOutput` plus `WritableUtils`),
 * the bytes every SequenceFile, MapFile and Nutch Writable is made of. Spec:
 * `../shared/spec/nutch-formats.md` §1–§2.
 *
 * Every multi-byte number is big-endian. Encodings:
 *
 *   i8/u8 1, bool 1 (00 false, anything else reads as true), i16 2, i32 4,
 *   i64 8 (a bigint here: Java longs go past 2^53), f32 4 (IEEE single)
 *   vint/vlong 1–9: −112…127 as one byte; otherwise a length byte (−113…−120
 *     positive, −121…−128 negative, the value stored as ~v) then 1–8 bytes
 *   Text: vint byte length, UTF-8 bytes
 *   Java UTF (`writeUTF`, and the deprecated `UTF8` class): u16 byte length,
 *     modified UTF-8 (UTF-16 units one by one, U+0000 as C0 80 or 00)
 *   writeString (`WritableUtils`): i32 byte length or −1 for null, UTF-8 bytes
 *
 * Java's Float.toString (javaFloat) is here too: Nutch writes scores into
 * metadata as text, and its dumps print them so.
 *
 * Text sorts by its UTF-8 bytes compared unsigned (not by JavaScript's UTF-16
 * order), and hashes as Hadoop's `WritableComparator.hashBytes` (h = 1, then
 * h = 31·h + signed byte, 32-bit), which is what `HashPartitioner` uses to
 * put a key in part (hash & 0x7fffffff) mod N.
 *
 * DataReader distrusts its bytes: every read checks the length first and
 * damage is a SherlockError naming the file and the offset of the damage.
 */

import { SherlockError } from '../errors.js';

/** Builds the error every Hadoop format here throws: file and offset of the damage. */
export function corruptHadoop(file: string, offset: number, message: string, cause?: unknown): SherlockError {
  return new SherlockError('SHERLOCK_CORRUPT_HADOOP', message, { file, offset }, cause === undefined ? undefined : { cause });
}

/** Total length in bytes of the vint/vlong whose first byte is `first` (signed or unsigned). */
export function vlongLength(first: number): number {
  const b = (first << 24) >> 24;
  if (b >= -112) return 1;
  return b < -120 ? -119 - b : -111 - b;
}

/** Sequential reader over bytes that came from `file` at `offset`. */
export class DataReader {
  pos = 0;
  /** Set when a read ran past the end (a header parser may then retry with more bytes). */
  truncated = false;

  /**
   * `exact`: the bytes are the file's own, so errors name the exact offset;
   * false for decompressed bytes, whose errors name `offset` (the record or block).
   */
  constructor(
    readonly bytes: Buffer,
    readonly file: string,
    readonly offset: number,
    readonly exact = true,
  ) {}

  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  /** A SherlockError at byte `at` of these bytes (the current position by default). */
  corrupt(message: string, at = this.pos): SherlockError {
    return corruptHadoop(this.file, this.exact ? this.offset + at : this.offset, message);
  }

  private need(n: number, what: string): number {
    if (n > this.remaining) {
      this.truncated = true;
      throw this.corrupt(`${what} needs ${n} bytes, ${this.remaining} left`);
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }

  u8(what = 'byte'): number {
    return this.bytes[this.need(1, what)]!;
  }

  i8(what = 'byte'): number {
    return this.bytes.readInt8(this.need(1, what));
  }

  bool(what = 'boolean'): boolean {
    return this.bytes[this.need(1, what)] !== 0;
  }

  i16(what = 'short'): number {
    return this.bytes.readInt16BE(this.need(2, what));
  }

  i32(what = 'int'): number {
    return this.bytes.readInt32BE(this.need(4, what));
  }

  i64(what = 'long'): bigint {
    return this.bytes.readBigInt64BE(this.need(8, what));
  }

  f32(what = 'float'): number {
    return this.bytes.readFloatBE(this.need(4, what));
  }

  bytesOf(n: number, what = 'bytes'): Buffer {
    const at = this.need(n, what);
    return this.bytes.subarray(at, at + n);
  }

  vlong(what = 'vlong'): bigint {
    const first = this.i8(what);
    const n = vlongLength(first) - 1;
    if (n === 0) return BigInt(first);
    const at = this.need(n, what);
    let v = 0n;
    for (let i = 0; i < n; i++) v = (v << 8n) | BigInt(this.bytes[at + i]!);
    if (first < -120) v = ~v;
    // Eight bytes wrap as a Java long does.
    return n === 8 ? BigInt.asIntN(64, v) : v;
  }

  vint(what = 'vint'): number {
    const start = this.pos;
    const first = this.i8(what);
    const n = vlongLength(first) - 1;
    if (n === 0) return first;
    if (n > 4) throw this.corrupt(`${what} does not fit 32 bits`, start);
    const at = this.need(n, what);
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + this.bytes[at + i]!;
    if (first < -120) v = -v - 1;
    if (v > 0x7fffffff || v < -0x80000000) throw this.corrupt(`${what} does not fit 32 bits`, start);
    return v;
  }

  /** A non-negative length as a vint, checked against the bytes left. */
  private length(read: () => number, what: string): number {
    const start = this.pos;
    const n = read();
    if (n < 0) throw this.corrupt(`${what} has negative length ${n}`, start);
    if (n > this.remaining) {
      this.truncated = true;
      throw this.corrupt(`${what} of ${n} bytes runs past the end (${this.remaining} left)`, start);
    }
    return n;
  }

  /** Text's raw UTF-8 payload (keys keep their exact bytes). */
  textBytes(what = 'Text'): Buffer {
    return this.bytesOf(this.length(() => this.vint(what), what), what);
  }

  /** Text as a string; malformed UTF-8 becomes U+FFFD, as Hadoop's decoder does. */
  text(what = 'Text'): string {
    return this.textBytes(what).toString('utf8');
  }

  /** Java's `readUTF` and the legacy `UTF8` class: u16 length, modified UTF-8. */
  javaUtf(what = 'UTF string'): string {
    return decodeModifiedUtf8(this.bytesOf(this.length(() => this.bytes.readUInt16BE(this.need(2, what)), what), what));
  }

  /** `WritableUtils.readString`: i32 length (−1 = null), UTF-8. */
  writableString(what = 'string'): string | null {
    const start = this.pos;
    const n = this.i32(what);
    if (n === -1) return null;
    this.pos = start;
    return this.bytesOf(this.length(() => this.i32(what), what), what).toString('utf8');
  }

  /** `WritableUtils.readStringArray`: i32 count (−1 = null), then writeString each. */
  stringArray(what = 'string array'): Array<string | null> | null {
    const start = this.pos;
    const n = this.i32(what);
    if (n === -1) return null;
    // Each element takes at least 4 bytes: a bound that stops absurd counts.
    if (n < 0 || n * 4 > this.remaining) throw this.corrupt(`${what} has impossible count ${n}`, start);
    const out: Array<string | null> = [];
    for (let i = 0; i < n; i++) out.push(this.writableString(what));
    return out;
  }

  /** A count that must be non-negative and whose items take at least `minSize` bytes each. */
  count(minSize: number, what: string): number {
    const start = this.pos;
    const n = this.i32(what);
    if (n < 0 || n * minSize > this.remaining) throw this.corrupt(`${what} has impossible count ${n}`, start);
    return n;
  }

  /** Fails unless every byte was read: Hadoop refuses values with bytes left over. */
  end(what: string): void {
    if (this.remaining !== 0) throw this.corrupt(`${this.remaining} bytes left over after the ${what}`);
  }
}

/** Decodes Java's modified UTF-8 (1–3 byte units; surrogates pass through as UTF-16). */
export function decodeModifiedUtf8(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const a = bytes[i]!;
    if (a < 0x80) {
      out += String.fromCharCode(a);
      i += 1;
    } else if ((a & 0xe0) === 0xc0 && i + 1 < bytes.length) {
      out += String.fromCharCode(((a & 0x1f) << 6) | (bytes[i + 1]! & 0x3f));
      i += 2;
    } else if ((a & 0xf0) === 0xe0 && i + 2 < bytes.length) {
      out += String.fromCharCode(((a & 0x0f) << 12) | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f));
      i += 3;
    } else {
      out += '\ufffd';
      i += 1;
    }
  }
  return out;
}

/** Java's modified UTF-8 for `writeUTF` (only class names go through it here). */
export function encodeModifiedUtf8(s: string): Buffer {
  // Class names are ASCII: one byte each, the same bytes as Latin-1.
  if (/^[\x01-\x7f]*$/.test(s)) return Buffer.from(s, 'latin1');
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 1 && c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Buffer.from(out);
}

/** Growable output buffer with Java's `DataOutput` encodings. */
export class DataWriter {
  private buf: Buffer;
  length = 0;

  constructor(capacity = 256) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  // Callers take the offset first: room() may replace this.buf.
  private room(n: number): number {
    if (this.length + n > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
      this.buf.copy(grown, 0, 0, this.length);
      this.buf = grown;
    }
    const at = this.length;
    this.length += n;
    return at;
  }

  u8(v: number): void {
    const at = this.room(1);
    this.buf[at] = v & 0xff;
  }

  bool(v: boolean): void {
    this.u8(v ? 1 : 0);
  }

  i16(v: number): void {
    const at = this.room(2);
    this.buf.writeInt16BE(v, at);
  }

  i32(v: number): void {
    const at = this.room(4);
    this.buf.writeInt32BE(v, at);
  }

  i64(v: bigint): void {
    const at = this.room(8);
    this.buf.writeBigInt64BE(v, at);
  }

  f32(v: number): void {
    const at = this.room(4);
    this.buf.writeFloatBE(v, at);
  }

  bytes(b: Uint8Array): void {
    const at = this.room(b.length);
    this.buf.set(b, at);
  }

  vlong(value: bigint | number): void {
    let v = BigInt(value);
    if (v >= -112n && v <= 127n) {
      this.u8(Number(v));
      return;
    }
    const negative = v < 0n;
    if (negative) v = ~v;
    let n = 0;
    for (let t = v; t > 0n; t >>= 8n) n++;
    this.u8((negative ? -120 : -112) - n);
    for (let i = n - 1; i >= 0; i--) this.u8(Number((v >> BigInt(8 * i)) & 0xffn));
  }

  vint(v: number): void {
    if (v >= -112 && v <= 127) {
      this.u8(v);
      return;
    }
    if (v !== (v | 0)) {
      this.vlong(v);
      return;
    }
    // vlong()'s bytes for a 32-bit int, in numbers: lengths and sizes go through here, and bigints cost an allocation each.
    const negative = v < 0;
    const magnitude = negative ? ~v : v;
    const n = magnitude >= 0x1000000 ? 4 : magnitude >= 0x10000 ? 3 : magnitude >= 0x100 ? 2 : 1;
    const at = this.room(1 + n);
    this.buf[at] = ((negative ? -120 : -112) - n) & 0xff;
    for (let i = 0; i < n; i++) this.buf[at + 1 + i] = (magnitude >>> (8 * (n - 1 - i))) & 0xff;
  }

  textBytes(payload: Uint8Array): void {
    this.vint(payload.length);
    this.bytes(payload);
  }

  /** A Text whose payload is the byte string `s` (one byte a character, as `Buffer#toString('latin1')` gives), written in place. */
  textLatin1(s: string): void {
    this.vint(s.length);
    const at = this.room(s.length);
    this.buf.write(s, at, s.length, 'latin1');
  }

  /** The UTF-8 of `s` (lone surrogates as U+FFFD, as Buffer.from makes them) written in place, without a Buffer of its own. */
  private utf8(s: string, n: number): void {
    const at = this.room(n);
    this.buf.write(s, at, n, 'utf8');
  }

  text(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.vint(n);
    this.utf8(s, n);
  }

  javaUtf(s: string): void {
    const b = encodeModifiedUtf8(s);
    const at = this.room(2);
    this.buf.writeUInt16BE(b.length, at);
    this.bytes(b);
  }

  writableString(s: string | null): void {
    if (s === null) {
      this.i32(-1);
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.i32(n);
    this.utf8(s, n);
  }

  stringArray(a: ReadonlyArray<string | null> | null): void {
    if (a === null) {
      this.i32(-1);
      return;
    }
    this.i32(a.length);
    for (const s of a) this.writableString(s);
  }

  /** The bytes written so far, without copying: valid until the next write or reset. */
  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  /** A copy of the bytes written so far. */
  toBuffer(): Buffer {
    return Buffer.from(this.view());
  }

  reset(): void {
    this.length = 0;
  }
}

/** One Text serialisation: vint length and UTF-8. */
export function encodeText(s: string | Uint8Array): Buffer {
  const w = new DataWriter(s.length + 5);
  if (typeof s === 'string') w.text(s);
  else w.textBytes(s);
  return w.toBuffer();
}

/** The UTF-8 payload of a serialised Text (its vint length prefix skipped). */
export function textPayload(serialised: Buffer, file = '(Text)', offset = 0): Buffer {
  const r = new DataReader(serialised, file, offset);
  const payload = r.textBytes();
  r.end('Text');
  return payload;
}

/** Hadoop's raw Text order: payloads compared as unsigned bytes, length prefixes skipped. */
export function compareText(a: Buffer, b: Buffer): number {
  return Buffer.compare(a.subarray(vlongLength(a[0] ?? 0)), b.subarray(vlongLength(b[0] ?? 0)));
}

/** `Text.hashCode()`: Hadoop's hashBytes over the UTF-8 payload. */
export function textHash(payload: Uint8Array): number {
  let h = 1;
  for (const b of payload) h = (Math.imul(31, h) + ((b << 24) >> 24)) | 0;
  return h;
}

/** The part (0 … parts−1) Hadoop's HashPartitioner gives a Text key. */
export function hashPartition(payload: Uint8Array, parts: number): number {
  return (textHash(payload) & 0x7fffffff) % parts;
}

/** Java's Float.toString (as Java 19+ prints it: the shortest digits that read back as the same float): "1.0", "1.0E-4". */
export function javaFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  let v = x;
  for (let p = 1; p <= 9; p++) {
    v = Number(x.toPrecision(p));
    if (Math.fround(v) === x) break;
  }
  const abs = Math.abs(v);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(v);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mantissa, exponent] = v.toExponential().split('e') as [string, string];
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}
