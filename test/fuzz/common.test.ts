/**
 * Fuzzing the readers of common/: ARC files (strict and lenient), buckets
 * (all four encodings) and the bucket file, Hadoop SequenceFiles (the
 * shared test data's real files as seeds) and every Writable class, gzip
 * members, CDX lines,
 * the document text attribute, the config file and plan files. Random and mutated valid input
 * must give a result or a SherlockError (harness.ts), and where a writer
 * exists what it wrote must read back the same.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ArcReader } from '../../common/archive/arc-read.js';
import { BUCKET_TYPE, BucketObject, decodeBucket, encodeBucket, type BucketType } from '../../common/bucket/bucket.js';
import { BucketReader, BucketWriter } from '../../common/bucket/file.js';
import { cdxFields, formatCdx, parseCdxLine } from '../../common/archive/cdx.js';
import { plainText, readDocText, TextBuilder, WORD_TYPE } from '../../common/bucket/doc-text.js';
import { encodePlan, readPlan } from '../../common/gather/plan-file.js';
// Registers Nutch's Writable classes, so the SequenceFiles' records decode.
import '../../common/hadoop/nutch-writables.js';
import { compressMember, parseGzipMember } from '../../common/archive/gzip-member.js';
import { BOOLEAN, BYTES, decodeWritable, encodeWritable, FLOAT, INT, LONG, MAP, NULL, TEXT, VINT, VLONG, type WritableType } from '../../common/hadoop/writables.js';
import { decodeRecord, readSequenceFile, recordTypes, SequenceFileReader } from '../../common/hadoop/sequence-file.js';
import { loadConfig } from '../../common/config.js';
import { isSherlockError } from '../../common/errors.js';
import { sherlockConfig } from '../../cli/settings.js';
import { testFiles } from '../helpers/nutch-data.js';
import { repoRoot } from '../helpers/paths.js';
import { writeSampleArc } from '../helpers/sample-arc.js';
import { bytesNear, check, fuzzFile, parsed, parsedFile } from './harness.js';

/** Runs `run` with a scratch directory (the readers read files), removed afterwards. */
function withScratch<T>(run: (file: (name: string) => string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'sherlock-fuzz-'));
  const done = (): void => rmSync(dir, { recursive: true, force: true });
  let result: T;
  try {
    result = run((name) => join(dir, name));
  } catch (err) {
    done();
    throw err;
  }
  if (result instanceof Promise) return result.finally(done) as T;
  done();
  return result;
}

/** Every record of an ARC file, strictly; then leniently, where nothing may be thrown at all. */
function readArcBoth(path: string): void {
  parsedFile(path, () => {
    const reader = ArcReader.open(path);
    try {
      for (const record of reader.records()) {
        // A record that reads makes a CDX line that reads back as itself.
        const fields = cdxFields(record, 'f.arc.gz');
        if (fields !== undefined && !/[ \n]/.test(Object.values(fields).join(''))) assert.deepEqual(parseCdxLine(formatCdx(fields)), fields);
      }
    } finally {
      reader.close();
    }
  });
  const reader = ArcReader.open(path, { onProblem: () => undefined });
  try {
    for (const record of reader.records()) assert.ok(record.offset >= 0 && record.length >= 0);
  } finally {
    reader.close();
  }
}

/** Names and values the bucket encodings can all hold (textual ones take no LF). */
const attrName = fc.integer({ min: 0, max: 255 }).filter((c) => c !== 0x28 && c !== 0x29 && c !== 0x0a && c !== 0).map((c) => String.fromCharCode(c));
const attrValue = fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a.map((b) => (b === 0x0a ? 0x20 : b))));
const bucketObject: fc.Arbitrary<BucketObject> = fc.letrec((tie) => ({
  object: fc
    .array(fc.oneof({ weight: 4, arbitrary: fc.tuple(attrName, attrValue) }, { weight: 1, arbitrary: fc.tuple(attrName, tie('object') as fc.Arbitrary<BucketObject>) }), { maxLength: 6 })
    .map((items) => {
      const o = new BucketObject();
      for (const [name, value] of items) {
        if (value instanceof BucketObject) o.addChild(name, value);
        else o.add(name, value);
      }
      return o;
    }),
})).object;
const ALL_TYPES = Object.values(BUCKET_TYPE) as BucketType[];
/** Writables read from old files but never written (common/hadoop/writables.ts says which). */
const READ_ONLY = new Set(['org.apache.hadoop.io.UTF8']);

function sameObject(a: BucketObject, b: BucketObject): void {
  assert.equal(a.items.length, b.items.length);
  a.items.forEach((item, i) => {
    const other = b.items[i]!;
    assert.equal(item.name, other.name);
    if (item.child !== undefined) sameObject(item.child, other.child!);
    else assert.deepEqual(Buffer.from(item.value!), Buffer.from(other.value!));
  });
}

fuzzFile(import.meta.url, {
  'ARC reader: mutated .arc.gz and plain .arc files read as records or SHERLOCK_CORRUPT_ARC; the lenient reader never throws': {
    runs: 400,
    property: (params) => withScratch(async (file) => {
      const seeds: Buffer[] = [];
      for (const compress of [true, false]) {
        const dir = file(compress ? 'gz' : 'plain');
        const [name] = await writeSampleArc(dir, { compress });
        seeds.push(readFileSync(join(dir, name!)));
      }
      const path = file('input.arc');
      return check(bytesNear(seeds, 6), (bytes) => {
        writeFileSync(path, bytes);
        readArcBoth(path);
      }, params);
    }),
  },

  'buckets: every encoding round-trips any object, and mutated encodings decode or throw SHERLOCK_CORRUPT_BUCKET': {
    runs: 1000,
    property: (params) =>
      check(
        fc.tuple(bucketObject, bucketObject, fc.constantFrom(...ALL_TYPES), fc.nat(), fc.nat({ max: 7 })),
        ([header, body, type, at, bit]) => {
          const plain = type === BUCKET_TYPE.PLAIN;
          const bucket = { header: plain ? new BucketObject() : header, body };
          const encoded = encodeBucket(type, bucket);
          const back = decodeBucket(type, encoded);
          sameObject(back.header, bucket.header);
          sameObject(back.body, bucket.body);
          if (encoded.length === 0) return;
          const flipped = Buffer.from(encoded);
          flipped[at % flipped.length] ^= 1 << bit;
          for (const t of ALL_TYPES) parsed(() => decodeBucket(t, flipped));
          parsed(() => decodeBucket(type, encoded.subarray(0, at % encoded.length)));
        },
        params,
      ),
  },

  'bucket file: a mutated file opens, iterates, decodes and verifies, or throws a SherlockError': {
    runs: 300,
    property: (params) => withScratch((file) => {
      const seedPath = file('seed.buckets');
      const writer = BucketWriter.open(seedPath);
      for (let i = 0; i < 5; i++) {
        const header = new BucketObject().add('U', `http://example.org/${i}`).add('D', '1700000000');
        writer.append(BUCKET_TYPE.V33, encodeBucket(BUCKET_TYPE.V33, { header, body: new BucketObject().add('X', 'text '.repeat(i * 20)) }));
      }
      writer.close();
      const path = file('input.buckets');
      return check(bytesNear([readFileSync(seedPath)], 6), (bytes) => {
        writeFileSync(path, bytes);
        parsedFile(path, () => {
          const reader = BucketReader.open(path);
          try {
            reader.verify();
            for (const stored of reader.buckets({ onDamage: () => undefined })) parsed(() => reader.decode(stored));
            for (const stored of reader.buckets()) reader.decode(stored);
          } finally {
            reader.close();
          }
        });
      }, params);
    }),
  },

  'SequenceFile reader: mutated Hadoop files read, with their Writables, or throw SHERLOCK_CORRUPT_HADOOP': {
    runs: 400,
    property: (params) => {
      // The smallest real file of each compression kind, as Hadoop wrote them.
      const seeds = ['none', 'record', 'block'].map((kind) => {
        const smallest = testFiles().filter((f) => f.compression === kind).sort((a, b) => a.bytes - b.bytes)[0]!;
        return readFileSync(smallest.path);
      });
      return withScratch((file) => {
        const path = file('input.seq');
        return check(bytesNear(seeds, 5), (bytes) => {
          writeFileSync(path, bytes);
          parsedFile(path, () => {
            const reader = SequenceFileReader.open(path);
            try {
              const types = parsed(() => recordTypes(reader));
              for (const record of reader.records()) if (types !== undefined) decodeRecord(path, types, record);
            } finally {
              reader.close();
            }
          });
          parsedFile(path, () => [...readSequenceFile(path)].length);
        }, params);
      });
    },
  },

  'Writables: every Hadoop and Nutch class decodes any bytes, and what it encodes decodes back, or throws SHERLOCK_CORRUPT_HADOOP': {
    runs: 1500,
    property: (params) => {
      // Values as Hadoop and Nutch wrote them: the first record of each uncompressed test file.
      const samples: Buffer[] = [];
      const types = new Set<WritableType<unknown>>([TEXT, INT, LONG, FLOAT, BOOLEAN, VINT, VLONG, NULL, BYTES, MAP]);
      for (const f of testFiles().filter((t) => t.compression === 'none')) {
        const reader = SequenceFileReader.open(f.path);
        try {
          const found = recordTypes(reader);
          types.add(found.key).add(found.value);
          for (const record of reader.records()) {
            samples.push(Buffer.from(record.key), Buffer.from(record.value));
            break;
          }
        } finally {
          reader.close();
        }
      }
      return check(fc.tuple(fc.constantFrom(...types), bytesNear(samples, 4), fc.boolean()), ([type, bytes, exact]) => {
        const value = parsed(() => decodeWritable(type, bytes, 'w', 0, exact));
        if (value === undefined || !exact || READ_ONLY.has(type.className)) return;
        assert.deepEqual(decodeWritable(type, encodeWritable(type, value), 'w', 0), value);
      }, params);
    },
  },

  'gzip members: mutated members inflate, or ask for more bytes, or throw SHERLOCK_CORRUPT_GZIP or SHERLOCK_TOO_LARGE': {
    runs: 1000,
    property: (params) => {
      const seeds = [compressMember(Buffer.from('a member of an ARC file\n'.repeat(30))), compressMember(Buffer.alloc(0))];
      return check(bytesNear(seeds, 4), (bytes) => {
        const member = parsed(() => parseGzipMember(bytes, { file: 'm.gz', offset: 0 }, 4096));
        if (member !== undefined) assert.ok(member.length <= bytes.length && member.data.length <= 4096);
      }, params);
    },
  },

  'CDX lines: any text parses to 11 fields or undefined, and a line of 11 fields formats back to itself': {
    runs: 2000,
    property: (params) =>
      check(
        fc.oneof(fc.string({ maxLength: 200 }), fc.array(fc.string({ maxLength: 12 }).map((f) => f.replace(/ /g, '')), { minLength: 11, maxLength: 11 }).map((f) => f.join(' '))),
        (line) => {
          const fields = parseCdxLine(line);
          if (fields !== undefined) assert.equal(formatCdx(fields), line);
        },
        params,
      ),
  },

  'document text: what TextBuilder writes reads back, and mutated text reads or throws a SherlockError': {
    runs: 1000,
    property: (params) =>
      check(
        fc.tuple(fc.array(fc.tuple(fc.oneof(fc.string({ maxLength: 30 }), fc.stringMatching(/^[a-z]{1,12}$/)), fc.nat({ max: 9 })), { maxLength: 20 }), fc.nat(), fc.nat({ max: 7 })),
        ([pieces, at, bit]) => {
          const builder = new TextBuilder(4096);
          let links = 0;
          for (const [piece, op] of pieces) {
            if (op < 6) builder.append(piece);
            else if (op === 6) builder.setType(WORD_TYPE.heading1);
            else if (op === 7) builder.breakBlock();
            else if (op === 8) builder.openLink(links++ % 1000);
            else builder.closeLink();
          }
          const bytes = builder.finish();
          const read = plainText(bytes);
          for (const [piece, op] of pieces) if (op < 6 && /^[a-z]+$/.test(piece)) assert.ok(read.includes(piece), `${piece} lost: ${read}`);
          [...readDocText(bytes)];
          if (bytes.length === 0) return;
          const flipped = Buffer.from(bytes);
          flipped[at % flipped.length] ^= 1 << bit;
          parsed(() => [...readDocText(flipped)]);
        },
        params,
      ),
  },

  'config: mutated sherlock.toml files load, every value from the file or the defaults, or are refused with SHERLOCK_BAD_CONFIG naming the place': {
    runs: 500,
    property: (params) => withScratch((file) => {
      const path = file('sherlock.toml');
      const seed = readFileSync(join(repoRoot, 'etc', 'sherlock.toml'));
      return check(bytesNear([seed], 6), (bytes) => {
        writeFileSync(path, bytes);
        try {
          const loaded = loadConfig(sherlockConfig, { file: path, env: { CONFIGURATION_DIRECTORY: '/nonexistent' } });
          for (const { source } of loaded.leaves.values()) assert.ok(source === 'default' || source.startsWith(`${path}:`), source);
        } catch (err) {
          if (!isSherlockError(err, 'SHERLOCK_BAD_CONFIG')) throw err;
          // A bad value names its key and "FILE:LINE"; a file that is not TOML names the file.
          assert.ok(err.place.file === path || (err.place.key !== undefined && err.message.includes(`${path}:`)), err.message);
        }
      }, params);
    }),
  },

  'plan files: mutated plans are read whole or refused with SHERLOCK_CORRUPT_PLAN': {
    runs: 500,
    property: (params) => withScratch((file) => {
      const seed = encodePlan([
        { url: 'http://example.org/', priority: 1 },
        { url: 'https://example.org/a?b=c', priority: 500_000_000 },
      ]);
      const path = file('input.plan');
      return check(bytesNear([seed], 4), (bytes) => {
        writeFileSync(path, bytes);
        parsedFile(path, () => readPlan(path));
      }, params);
    }),
  },
});
