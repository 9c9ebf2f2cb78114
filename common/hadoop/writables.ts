/**
 * Hadoop Writables by Java class name: the registry a SequenceFile's key and
 * value class names and a MapWritable's class ids resolve through, the simple
 * `org.apache.hadoop.io` classes, and MapWritable itself. Spec:
 * `../shared/spec/nutch-formats.md` §2.4–§2.5.
 *
 * A Writable type reads and writes one value (see io.ts for the
 * primitives); values whose class is only known at run time (MapWritable
 * entries) are `Typed`: the Java class name and the value. Other modules
 * register their classes (nutch-writables.ts registers Nutch's), so that a
 * MapWritable naming them can be read.
 *
 * MapWritable layout:
 *   i8   n, the number of classes declared in this map (0 … 127)
 *   n ×  (i8 id = 1, 2, …; Java UTF class name)
 *   i32  entry count
 *   per entry: i8 key class id, key, i8 value class id, value
 * Ids −127 … −113 are Hadoop's fixed table (CLASS_IDS below); 1 … n name the
 * declared classes. The declared list is kept as read (`classes`) so that a
 * rewrite is byte-identical; classes used but not listed are declared after
 * it, in order of first use (key before value), as Hadoop does. Entries keep
 * the file's order (Java wrote its HashMap's order).
 */

import { compareText, DataReader, DataWriter } from './io.js';

/** One Writable class: its Java name, how to read and write a value, and optionally its raw sort order. */
export interface WritableType<T> {
  readonly className: string;
  read(input: DataReader): T;
  write(output: DataWriter, value: T): void;
  /** Order of two serialised values (MapFile keys); unsigned bytes when absent. */
  compare?(a: Buffer, b: Buffer): number;
}

/** A value whose class is carried with it: the full Java class name and the value. */
export interface Typed {
  className: string;
  value: unknown;
}

const registry = new Map<string, WritableType<unknown>>();

/** Old SequenceFile headers name some classes by these aliases (Hadoop's WritableName). */
const ALIASES: Record<string, string> = {
  UTF8: 'org.apache.hadoop.io.UTF8',
  long: 'org.apache.hadoop.io.LongWritable',
  null: 'org.apache.hadoop.io.NullWritable',
  MD5Hash: 'org.apache.hadoop.io.MD5Hash',
};

export function canonicalClassName(name: string): string {
  return ALIASES[name] ?? name;
}

export function registerWritable<T>(type: WritableType<T>): WritableType<T> {
  registry.set(type.className, type as WritableType<unknown>);
  return type;
}

/** The registered type of a class name (aliases allowed), or undefined. */
export function findWritable(className: string): WritableType<unknown> | undefined {
  return registry.get(canonicalClassName(className));
}

// One writer for every encodeWritable (no write() calls it back): values of a few KiB grew a fresh one five times.
const SCRATCH = 64 * 1024;
let scratch = new DataWriter(SCRATCH);

/** Serialises one value of a Writable type. */
export function encodeWritable<T>(type: WritableType<T>, value: T): Buffer {
  scratch.reset();
  type.write(scratch, value);
  const out = scratch.toBuffer();
  // A huge value (a body of megabytes) is not kept hold of.
  if (out.length > SCRATCH) scratch = new DataWriter(SCRATCH);
  return out;
}

/**
 * Reads one value that must fill `bytes` exactly (Hadoop refuses leftovers).
 * `offset` is where the bytes lie in `file`; `exact` false for decompressed
 * bytes, whose errors then name `offset` itself.
 */
export function decodeWritable<T>(type: WritableType<T>, bytes: Buffer, file: string, offset: number, exact = true): T {
  const input = new DataReader(bytes, file, offset, exact);
  const value = type.read(input);
  input.end(type.className);
  return value;
}

function simple<T>(className: string, read: (r: DataReader) => T, write: (w: DataWriter, v: T) => void, compare?: (a: Buffer, b: Buffer) => number): WritableType<T> {
  return registerWritable(compare === undefined ? { className, read, write } : { className, read, write, compare });
}

function signedCompare(a: Buffer, b: Buffer): number {
  const x = a.length === 8 ? a.readBigInt64BE() : BigInt(a.readInt32BE());
  const y = b.length === 8 ? b.readBigInt64BE() : BigInt(b.readInt32BE());
  return x < y ? -1 : x > y ? 1 : 0;
}

export const TEXT = simple<string>('org.apache.hadoop.io.Text', (r) => r.text(), (w, v) => w.text(v), compareText);
export const INT = simple<number>('org.apache.hadoop.io.IntWritable', (r) => r.i32(), (w, v) => w.i32(v), signedCompare);
export const LONG = simple<bigint>('org.apache.hadoop.io.LongWritable', (r) => r.i64(), (w, v) => w.i64(v), signedCompare);
export const FLOAT = simple<number>('org.apache.hadoop.io.FloatWritable', (r) => r.f32(), (w, v) => w.f32(v));
export const BOOLEAN = simple<boolean>('org.apache.hadoop.io.BooleanWritable', (r) => r.bool(), (w, v) => w.bool(v));
export const VINT = simple<number>('org.apache.hadoop.io.VIntWritable', (r) => r.vint(), (w, v) => w.vint(v));
export const VLONG = simple<bigint>('org.apache.hadoop.io.VLongWritable', (r) => r.vlong(), (w, v) => w.vlong(v));
export const NULL = simple<null>(
  'org.apache.hadoop.io.NullWritable',
  () => null,
  () => undefined,
);
export const MD5 = simple<Buffer>('org.apache.hadoop.io.MD5Hash', (r) => Buffer.from(r.bytesOf(16, 'MD5Hash')), (w, v) => w.bytes(v));
export const BYTES = simple<Buffer>(
  'org.apache.hadoop.io.BytesWritable',
  (r) => Buffer.from(r.bytesOf(r.count(1, 'BytesWritable length'), 'BytesWritable')),
  (w, v) => {
    w.i32(v.length);
    w.bytes(v);
  },
  (a, b) => Buffer.compare(a.subarray(4), b.subarray(4)),
);
/** The deprecated UTF8 class: read only (old headers and Nutch 0.x keys); Hadoop says never to write it. */
export const UTF8 = simple<string>(
  'org.apache.hadoop.io.UTF8',
  (r) => r.javaUtf('UTF8'),
  () => {
    throw new Error('org.apache.hadoop.io.UTF8 is read-only here: write Text');
  },
  (a, b) => Buffer.compare(a.subarray(2), b.subarray(2)),
);

/** Hadoop's fixed MapWritable class ids (AbstractMapWritable), −127 … −113. */
const CLASS_IDS: ReadonlyArray<readonly [number, string]> = [
  [-127, 'org.apache.hadoop.io.ArrayWritable'],
  [-126, 'org.apache.hadoop.io.BooleanWritable'],
  [-125, 'org.apache.hadoop.io.BytesWritable'],
  [-124, 'org.apache.hadoop.io.FloatWritable'],
  [-123, 'org.apache.hadoop.io.IntWritable'],
  [-122, 'org.apache.hadoop.io.LongWritable'],
  [-121, 'org.apache.hadoop.io.MapWritable'],
  [-120, 'org.apache.hadoop.io.MD5Hash'],
  [-119, 'org.apache.hadoop.io.NullWritable'],
  [-118, 'org.apache.hadoop.io.ObjectWritable'],
  [-117, 'org.apache.hadoop.io.SortedMapWritable'],
  [-116, 'org.apache.hadoop.io.Text'],
  [-115, 'org.apache.hadoop.io.TwoDArrayWritable'],
  [-114, 'org.apache.hadoop.io.VIntWritable'],
  [-113, 'org.apache.hadoop.io.VLongWritable'],
];
const CLASS_BY_ID = new Map(CLASS_IDS);
const ID_BY_CLASS = new Map(CLASS_IDS.map(([id, name]) => [name, id]));

export interface MapWritable {
  entries: Array<[Typed, Typed]>;
  /** Classes declared in the map's prelude, in id order (1, 2, …); kept for byte-identical rewrites. */
  classes?: string[];
}

const MAP_CLASS = 'org.apache.hadoop.io.MapWritable';

function readMap(r: DataReader): MapWritable {
  const start = r.pos;
  const declared = r.i8('MapWritable class count');
  if (declared < 0) throw r.corrupt(`MapWritable declares ${declared} classes`, start);
  const classes: string[] = [];
  for (let i = 1; i <= declared; i++) {
    const at = r.pos;
    const id = r.i8('MapWritable class id');
    const name = r.javaUtf('MapWritable class name');
    if (id !== i) throw r.corrupt(`MapWritable declares class id ${id} where ${i} was due`, at);
    // Hadoop loads every declared class up front, so an unknown one fails here too.
    if (findWritable(name) === undefined) throw r.corrupt(`unknown class ${name} in a MapWritable`, at);
    classes.push(name);
  }
  const count = r.count(2, 'MapWritable entry count');
  const readTyped = (what: string): Typed => {
    const at = r.pos;
    const id = r.i8(`${what} class id`);
    const className = id > 0 ? classes[id - 1] : CLASS_BY_ID.get(id);
    if (className === undefined) throw r.corrupt(`MapWritable ${what} has undeclared class id ${id}`, at);
    const type = findWritable(className);
    if (type === undefined) throw r.corrupt(`MapWritable ${what} has class ${className}, which cannot be read`, at);
    return { className, value: type.read(r) };
  };
  const entries: Array<[Typed, Typed]> = [];
  for (let i = 0; i < count; i++) entries.push([readTyped('key'), readTyped('value')]);
  return { entries, classes };
}

function writeMap(w: DataWriter, map: MapWritable): void {
  const classes = [...(map.classes ?? [])];
  for (const [key, value] of map.entries) {
    for (const { className } of [key, value]) {
      if (!ID_BY_CLASS.has(className) && !classes.includes(className)) classes.push(className);
    }
  }
  if (classes.length > 127) throw new Error(`a MapWritable can declare at most 127 classes, not ${classes.length}`);
  w.u8(classes.length);
  classes.forEach((name, i) => {
    w.u8(i + 1);
    w.javaUtf(name);
  });
  w.i32(map.entries.length);
  for (const pair of map.entries) {
    for (const { className, value } of pair) {
      const type = findWritable(className);
      if (type === undefined) throw new Error(`no Writable registered for class ${className}`);
      w.u8(ID_BY_CLASS.get(className) ?? classes.indexOf(className) + 1);
      type.write(w, value);
    }
  }
}

export const MAP = registerWritable<MapWritable>({ className: MAP_CLASS, read: readMap, write: writeMap });

/** Shorthands for the Typed values Nutch puts in its metadata maps. */
export const typed = {
  text: (value: string): Typed => ({ className: TEXT.className, value }),
  int: (value: number): Typed => ({ className: INT.className, value }),
  long: (value: bigint): Typed => ({ className: LONG.className, value }),
  float: (value: number): Typed => ({ className: FLOAT.className, value }),
};

/** The value stored under a Text key, or undefined. */
export function mapGet(map: MapWritable | null, key: string): Typed | undefined {
  return map?.entries.find(([k]) => k.className === TEXT.className && k.value === key)?.[1];
}
