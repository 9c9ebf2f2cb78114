import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import test from 'node:test';
import fc from 'fast-check';
import { ArcReader, readArc } from '../../../common/archive/arc-read.js';
import { CDX_LEGEND, cdxFields, cdxKey, cdxMime, cdxOriginal, formatCdx, formatCdxj, mentionsRobots, parseCdxLine, type CdxFields } from '../../../common/archive/cdx.js';
import { isSherlockError, type SherlockError } from '../../../common/errors.js';
import { testdata } from '../../helpers/paths.js';

type Field = keyof CdxFields;

/** Our lines for one ARC file, leniently read when `problems` is given. */
function indexArc(path: string, format: (f: CdxFields) => string, problems?: SherlockError[]): string[] {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const options = problems === undefined ? {} : { onProblem: (p: SherlockError) => problems.push(p) };
  const lines: string[] = [];
  const reader = ArcReader.open(path, options);
  try {
    const fileDate = reader.versionDate();
    for (const record of reader.records()) {
      const fields = cdxFields(record, name, fileDate);
      if (fields !== undefined) lines.push(format(fields));
    }
  } finally {
    reader.close();
  }
  return lines.sort();
}

function expectedLines(path: string): string[] | undefined {
  if (!existsSync(path)) return undefined;
  return readFileSync(path, 'latin1')
    .split('\n')
    .filter((line) => line !== '' && line !== CDX_LEGEND)
    .sort();
}

/** Every ARC under testdata/arc with the folder it is in. */
function arcFiles(): Array<{ dir: string; name: string; path: string }> {
  const out = [];
  for (const dir of ['pywb', 'warcio', 'ukwa', 'webarchive-commons', 'cdx-writer']) {
    for (const name of readdirSync(testdata('arc', dir)).sort()) {
      if (/\.arc(\.gz)?$/.test(name)) out.push({ dir, name, path: testdata('arc', dir, name) });
    }
  }
  return out;
}

/**
 * Where our CDX line differs from pywb's cdx-indexer, the field and the choice
 * the testdata README (and spec/arc-cdx.md) makes; every other field of every
 * line equals pywb's. Mostly "prefer IA's value": the IA column below is what
 * IA's CDX-Writer expectations hold, checked separately.
 */
const PYWB_DIFFERENCES: Record<string, Partial<Record<Field, string>>> = {
  'IAH-20080430204825-00000-blackbook-truncated.arc.gz': { status: 'a DNS answer is not HTTP: `-` (IA rule), pywb says 200' },
  'example-space-in-url.arc': { original: 'spaces as %20 (pywb leaves them raw, which breaks its own line)' },
  '10_digit_date.arc.gz': { timestamp: 'always 14 digits (IA), pywb copies the raw date' },
  'arc_v1_with_v2_header.arc.gz': { timestamp: 'always 14 digits (IA)' },
  'hex_instead_of_date.arc.gz': { timestamp: 'not a date: the file’s date (captureDate); pywb copies 14 hex digits' },
  '15_digit_date.arc.gz': { timestamp: 'day 00 is no instant: 01 (as warcio’s ARC-to-WARC and cdxj-indexer)' },
  'transposed_header.arc.gz': { timestamp: 'the date in its transposed place (IA); pywb takes the IP' },
  'alexa_charset_in_header.arc.gz': {
    key: 'the MIME field holds a space; IA parses the line, pywb mis-splits it',
    timestamp: 'same',
    original: 'same',
    mime: 'same',
    status: 'same',
    digest: 'same',
    robots: 'same',
    length: 'same',
    offset: 'same',
    filename: 'same',
  },
  'alexa_short_header.arc.gz': { status: 'an SSH banner is not HTTP: `-` (IA)', digest: 'non-HTTP content digested whole (IA, spec §4)' },
  'bad_mime_type.arc.gz': { mime: 'garbage MIME: unk (IA)' },
  'empty_payload_header_ending_with_lf.arc.gz': { mime: 'no-type: unk (IA)' },
  'uncompressed.arc': { mime: 'no-type: unk (IA)', robots: '<meta name=robots> flags (IA); pywb always `-`' },
  'meta_tag_FI.arc.gz': { robots: 'robot flags (IA)' },
  'meta_tag_I.arc.gz': { robots: 'robot flags (IA)' },
  'carriage_return_in_url.arc.gz': { key: 'CR dropped (IA); pywb escapes it', original: 'CR dropped (IA)' },
  'chardet_failure_url.arc.gz': { key: 'raw bytes escaped as they are (IA); pywb re-encodes a Latin-1 reading', original: 'raw bytes kept (IA)' },
  'formfeed_in_url.arc.gz': { key: 'raw bytes escaped as they are (IA)', original: 'raw bytes kept, FF as %0C (IA)' },
  'non_ascii_url.arc.gz': { key: 'raw bytes escaped as they are (IA)', original: 'raw bytes kept (IA)' },
  'spaces_in_url.arc.gz': { original: 'spaces as %20 (IA); pywb leaves them raw' },
};

/** Files whose reference tools disagree with IA's expectations where the spec sides with pywb. */
const IA_DIFFERENCES: Record<string, Partial<Record<Field, string>>> = {
  'empty_record.arc.gz': { digest: 'an empty body has the empty-payload digest (spec §4); IA digests the stray CRs' },
  '15_digit_date.arc.gz': { timestamp: 'day 00 is no instant: 01 (docs/wayback.md "Dates"); IA keeps 00' },
  'hex_instead_of_date.arc.gz': { timestamp: 'no date of its own: the version block’s (docs/wayback.md "Dates"); IA writes `-`' },
};

const FIELDS: Field[] = ['key', 'timestamp', 'original', 'mime', 'status', 'digest', 'redirect', 'robots', 'length', 'offset', 'filename'];

/** A reference line; in pywb's lines with raw spaces in the URL the extra tokens belong to `a`. */
function readReference(line: string): CdxFields | undefined {
  const t = line.split(' ');
  if (t.length <= FIELDS.length) return parseCdxLine(line);
  const extra = t.length - FIELDS.length;
  const values = [t[0]!, t[1]!, t.slice(2, 3 + extra).join(' '), ...t.slice(3 + extra)];
  return Object.fromEntries(FIELDS.map((name, i) => [name, values[i]!])) as unknown as CdxFields;
}

/** The fields in which a reference line and ours differ (a line that reads into no fields differs everywhere). */
function differingFields(a: string, b: string): Field[] {
  const [x, y] = [readReference(a), parseCdxLine(b)];
  if (x === undefined || y === undefined) return FIELDS;
  return FIELDS.filter((f) => x[f] !== y[f]);
}

/** Pairs our lines with the reference's by position after sorting both (one line per file in all but three). */
function compareWith(reference: string[], ours: string[], allowed: Partial<Record<Field, string>>, label: string): void {
  assert.equal(ours.length, reference.length, `${label}: line count`);
  reference.forEach((ref, i) => {
    const diff = differingFields(ref, ours[i]!);
    assert.deepEqual(diff.filter((f) => allowed[f] === undefined), [], `${label}: line ${i}\n  ref:  ${ref}\n  ours: ${ours[i]}`);
  });
}

test('every ARC pywb indexes gives pywb’s CDX lines, except where the README chooses otherwise', () => {
  let compared = 0;
  for (const { dir, name, path } of arcFiles()) {
    const pywb = expectedLines(testdata('arc', dir, 'expected', `${name}.pywb-cdx-indexer.cdx`));
    if (pywb === undefined || pywb.length === 0 || name === 'bad.arc' || name === 'negative_content_length.arc.gz') continue;
    // Damaged example-space-in-url.arc is read leniently, as cdxj-indexer does.
    const problems: SherlockError[] = [];
    const ours = indexArc(path, formatCdx, name === 'example-space-in-url.arc' ? problems : undefined);
    compareWith(pywb, ours, PYWB_DIFFERENCES[name] ?? {}, name);
    compared += 1;
  }
  assert.equal(compared, 26);
});

test('every ARC with IA CDX-Writer expectations gives IA’s lines (IA’s default mode skips the version block)', () => {
  let compared = 0;
  for (const { name, path } of arcFiles().filter((f) => f.dir === 'cdx-writer')) {
    const ia = expectedLines(testdata('arc', 'cdx-writer', 'expected', `${name}.cdx-writer-default.cdx`));
    // IA stops at the negative length, as strict reading does: tested on its own below.
    if (ia === undefined || name === 'negative_content_length.arc.gz') continue;
    compareWith(ia, indexArc(path, formatCdx), IA_DIFFERENCES[name] ?? {}, name);
    compared += 1;
  }
  assert.equal(compared, 21);
});

test('the separator-less Heritrix ARC, which pywb cannot read, gives the keys and digests of its .arc.gz twin at the plain file’s offsets', () => {
  const plain = indexArc(testdata('arc', 'webarchive-commons', 'IAH-20080430204825-00000-blackbook-truncated.arc'), (f) => f.key + ' ' + f.digest + ' ' + f.offset + '+' + f.length);
  const twin = indexArc(testdata('arc', 'ukwa', 'IAH-20080430204825-00000-blackbook-truncated.arc.gz'), (f) => f.key + ' ' + f.digest);
  assert.deepEqual(
    plain.map((l) => l.slice(0, l.lastIndexOf(' '))),
    twin,
  );
  const extents = plain.map((l) => l.slice(l.lastIndexOf(' ') + 1)).sort((a, b) => parseInt(a) - parseInt(b));
  assert.deepEqual(extents, ['1399+116', '1515+861', '2376+748', '3124+29079', '32203+2049', '34252+1521', '35773+647', '36420+50928']);
});

test('a negative length is an error naming file and offset after IA’s lines; lenient reading gives pywb’s lines but the damaged one', () => {
  const path = testdata('arc', 'cdx-writer', 'negative_content_length.arc.gz');
  const seen: string[] = [];
  assert.throws(
    () => {
      for (const record of readArc(path)) {
        const f = cdxFields(record, 'negative_content_length.arc.gz');
        if (f !== undefined) seen.push(formatCdx(f));
      }
    },
    (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_ARC') && err.place.file === path && err.place.offset === 399,
  );
  assert.deepEqual(seen, expectedLines(testdata('arc', 'cdx-writer', 'expected', 'negative_content_length.arc.gz.cdx-writer-default.cdx')));
  const problems: SherlockError[] = [];
  const lenient = indexArc(path, formatCdx, problems);
  const pywb = expectedLines(testdata('arc', 'cdx-writer', 'expected', 'negative_content_length.arc.gz.pywb-cdx-indexer.cdx'))!;
  assert.deepEqual(lenient, pywb.filter((line) => !line.includes(' 399 ')));
  assert.deepEqual(
    problems.map((p) => p.place.offset),
    [399],
  );
});

test('pywb’s deliberately broken bad.arc is a clear error, and leniently a report per damage, never a crash', () => {
  const path = testdata('arc', 'pywb', 'bad.arc');
  assert.throws(() => indexArc(path, formatCdx), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_ARC') && err.place.file === path && err.place.offset === 0);
  const problems: SherlockError[] = [];
  const lines = indexArc(path, formatCdx, problems);
  assert.deepEqual(problems.map((p) => p.place.offset), [0, 134, 262]);
  // The one record with a usable length, at the offset pywb gives it.
  assert.deepEqual(lines.map((l) => parseCdxLine(l)!.offset), ['202']);
});

test('example-space-in-url.arc: strictly an error at the record running past the end, leniently cdxj-indexer’s line', () => {
  const path = testdata('arc', 'warcio', 'example-space-in-url.arc');
  assert.throws(() => indexArc(path, formatCdxj), (err: unknown) => isSherlockError(err, 'SHERLOCK_CORRUPT_ARC') && err.place.offset === 151);
  const lenient = indexArc(path, formatCdxj, []);
  assert.deepEqual(lenient, expectedLines(testdata('arc', 'warcio', 'expected', 'example-space-in-url.arc.cdxj-indexer.cdxj')));
});

/**
 * CDXJ against cdxj-indexer: the same values as our CDX (so the same choices),
 * plus cdxj-indexer's own habits: it pads short dates with 9s, takes the MIME
 * type from the HTTP header, omits MIME and status it cannot read.
 */
const CDXJ_DIFFERENCES: Record<string, string[]> = {
  'IAH-20080430204825-00000-blackbook-truncated.arc.gz': ['mime'],
  '10_digit_date.arc.gz': ['timestamp', 'mime'],
  '14_digit_plus_text_date.arc.gz': ['mime'],
  '15_digit_date.arc.gz': ['timestamp'],
  'arc_v1_with_v2_header.arc.gz': ['timestamp'],
  'hex_instead_of_date.arc.gz': ['timestamp'],
  'transposed_header.arc.gz': ['timestamp'],
  'alexa_charset_in_header.arc.gz': ['key', 'timestamp', 'url'],
  'alexa_short_header.arc.gz': ['status', 'digest'],
  'bad_mime_type.arc.gz': ['mime'],
  'carriage_return_in_url.arc.gz': ['url'],
  'chardet_failure_url.arc.gz': ['key'],
  'formfeed_in_url.arc.gz': ['key', 'url'],
  'non_ascii_url.arc.gz': ['key'],
  'meta_tag_FI.arc.gz': ['robotflags'],
  'meta_tag_I.arc.gz': ['robotflags'],
  'uncompressed.arc': ['robotflags'],
};

function parseCdxj(line: string): Record<string, string> {
  const [key, timestamp] = line.split(' ', 2);
  return { key: key!, timestamp: timestamp!, ...(JSON.parse(line.slice(key!.length + timestamp!.length + 2)) as Record<string, string>) };
}

test('CDXJ lines are cdxj-indexer’s, in its layout, but for the same choices as the CDX and its own habits', () => {
  let compared = 0;
  for (const { dir, name, path } of arcFiles()) {
    const reference = expectedLines(testdata('arc', dir, 'expected', `${name}.cdxj-indexer.cdxj`));
    if (reference === undefined || ['bad.arc', 'negative_content_length.arc.gz', 'example-space-in-url.arc'].includes(name)) continue;
    const ours = indexArc(path, formatCdxj);
    assert.equal(ours.length, reference.length, name);
    const allowed = CDXJ_DIFFERENCES[name] ?? [];
    reference.forEach((ref, i) => {
      if (allowed.length === 0) assert.equal(ours[i], ref, name);
      const [a, b] = [parseCdxj(ref), parseCdxj(ours[i]!)];
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]);
      assert.deepEqual(keys.filter((k) => !allowed.includes(k)), [], `${name}\n  ref:  ${ref}\n  ours: ${ours[i]}`);
    });
    compared += 1;
  }
  assert.equal(compared, 27);
});

test('field rules: the original URL stays one field, the MIME type is IA’s', () => {
  assert.equal(cdxOriginal('http://a/b c\rd\n\fe\b'), 'http://a/b%20cd%0A%0Ce%08');
  assert.equal(cdxOriginal('http://a/\xe9'), 'http://a/\xe9');
  assert.equal(cdxMime('text/html; Charset=iso-8859-1'), 'text/html');
  for (const raw of ['', 'no-type', 'imag\xd1m)']) assert.equal(cdxMime(raw), 'unk');
  assert.equal(cdxMime('text/dns'), 'text/dns');
});

test('a revisit without a digest has none in its CDXJ line; a digest of another algorithm keeps its prefix', () => {
  const f = parseCdxLine('com,example)/ 20240401100000 http://example.com/ warc/revisit - - - - 300 0 x.warc.gz')!;
  assert.equal(formatCdxj(f), 'com,example)/ 20240401100000 {"url": "http://example.com/", "mime": "warc/revisit", "length": "300", "offset": "0", "filename": "x.warc.gz"}');
  assert.match(formatCdxj({ ...f, digest: 'sha256:abc' }), /"digest": "sha256:abc"/);
});

test('a CDX line reads back into its fields, and its sort key is urlkey and timestamp', () => {
  const line = 'com,example)/ 20140216050221 http://example.com/ text/html 200 B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A - - 1656 151 example.arc';
  const fields = parseCdxLine(line)!;
  assert.equal(formatCdx(fields), line);
  assert.equal(fields.offset, '151');
  assert.equal(cdxKey(line), 'com,example)/ 20140216050221');
  assert.equal(parseCdxLine(CDX_LEGEND), undefined);
});

test('the byte scan for `robots` finds exactly what /robots/i finds in the Latin-1 reading, any case, any stretch', () => {
  const piece = fc.constantFrom('r', 'R', 'o', 'O', 'b', 'B', 't', 'T', 's', 'S', 'robots', 'RoBoTs', 'rob', 'ots', '\x52', '\xd2', '\xf3', ' ', '<', '@');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 40 }), fc.nat(), fc.nat(), (pieces, a, b) => {
      const bytes = Buffer.from(pieces.join(''), 'latin1');
      const from = bytes.length === 0 ? 0 : a % (bytes.length + 1);
      const to = from + (bytes.length === 0 ? 0 : b % (bytes.length - from + 1));
      assert.equal(mentionsRobots(bytes, from, to), /robots/i.test(bytes.toString('latin1', from, to)));
    }),
    { numRuns: 3000 },
  );
});
