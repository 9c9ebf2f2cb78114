/**
 * The Nutch export's linkdb, made by the segment's worker threads a slice of
 * the links' merge at a time (exporter/nutch/linkdb.ts): over the benchmark's
 * synthetic crawl (bench/nutch-state.ts) with a sort budget of a few KiB, so
 * that the links spill into dozens of runs and the merge is cut into
 * hundreds of slices, the linkdb is the same bytes with 1, 2 and 3 threads
 * (each thread count sorts different runs, so the slices fall elsewhere), is
 * what the segment's outlinks to other hosts say it must be, and `--parts 3` spreads the
 * same records over three parts.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureNutchState } from '../../../bench/nutch-state.js';
import { exportNutch, partName } from '../../../exporter/nutch/export.js';
import { verifyChecksums } from '../../../common/hadoop/crc.js';
import { hashPartition } from '../../../common/hadoop/io.js';
import { MapFileReader } from '../../../common/hadoop/map-file.js';
import type { Link, ParseData } from '../../../common/hadoop/nutch-writables.js';
import { decodeRecord, recordTypes, SequenceFileReader } from '../../../common/hadoop/sequence-file.js';
import { scratchDir } from '../../helpers/paths.js';

const NOW = Date.UTC(2025, 5, 6, 7, 8, 9);
const SORT_MEMORY = 16 * 1024;

/** A MapFile's records decoded, in file order. */
function records<V>(dir: string): Array<{ key: string; value: V }> {
  const reader = MapFileReader.open(dir);
  try {
    const types = recordTypes(reader.data);
    return [...reader.records()].map((r) => decodeRecord(reader.data.file, types, r) as { key: string; value: V });
  } finally {
    reader.close();
  }
}

/** A SequenceFile's bytes with its random sync marker zeroed wherever it occurs. */
function blankSyncMarkers(path: string): Buffer {
  const reader = SequenceFileReader.open(path);
  const marker = reader.header.syncMarker!;
  reader.close();
  const bytes = readFileSync(path);
  for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker, at + marker.length)) bytes.fill(0, at, at + marker.length);
  return bytes;
}

/** The linkdb the segment's parse_data says: each target's inlinks (from, anchor) in byte order, repeats and links within a host left out (Nutch's linkdb.ignore.internal.links). */
function expectedLinkDb(out: string, segment: string): Array<{ key: string; value: Link[] }> {
  const bytes = (s: string) => Buffer.from(s).toString('latin1');
  const lines = new Set<string>();
  for (const { key: from, value } of records<ParseData>(join(out, 'segments', segment, 'parse_data', partName(0)))) {
    for (const link of value.outlinks) if (new URL(link.url).hostname !== new URL(from).hostname) lines.add([bytes(link.url), bytes(from), bytes(link.anchor.slice(0, 100))].join('\0'));
  }
  const byTarget = new Map<string, Link[]>();
  for (const line of [...lines].sort()) {
    const [to, from, anchor] = line.split('\0').map((s) => Buffer.from(s, 'latin1').toString()) as [string, string, string];
    const inlinks = byTarget.get(to) ?? [];
    inlinks.push({ url: from, anchor, metadata: null });
    byTarget.set(to, inlinks);
  }
  return [...byTarget].map(([key, value]) => ({ key, value }));
}

test('the linkdb is the same bytes whatever the number of threads, as the outlinks say, and split by --parts as Hadoop does', async (t) => {
  const scratch = scratchDir(t);
  const state = await ensureNutchState(scratch, 3000, () => undefined);
  const linkdbOf = (dir: string, part = 0) => join(dir, 'linkdb', 'current', partName(part));

  const byThreads = [1, 2, 3].map((threads) => ({ threads, out: join(scratch, `threads-${threads}`) }));
  const reports = [];
  for (const { threads, out } of byThreads) reports.push(await exportNutch(state, { out, sortMemory: SORT_MEMORY, checksum: true, parts: 1, now: NOW, threads }));
  const [one, ...more] = byThreads.map(({ out }) => linkdbOf(out));
  for (const [i, dir] of more.entries()) {
    for (const file of ['data', 'index']) assert.ok(blankSyncMarkers(join(dir, file)).equals(blankSyncMarkers(join(one!, file))), `${file} with ${i + 2} threads`);
  }
  for (const dir of [one!, ...more]) for (const file of ['data', 'index']) assert.ok(verifyChecksums(join(dir, file)), `${dir}/${file}`);

  const linkdb = records<Link[]>(one!);
  const expected = expectedLinkDb(byThreads[0]!.out, reports[0]!.segment);
  assert.ok(expected.length > 1000, `only ${expected.length} targets`);
  assert.equal(linkdb.length, expected.length);
  assert.deepEqual(linkdb, expected);
  for (const report of reports) assert.equal(report.linkedUrls, expected.length);

  // Three parts: each the records whose key Hadoop's HashPartitioner puts there, in the same order.
  const split = join(scratch, 'parts-3');
  const report = await exportNutch(state, { out: split, sortMemory: SORT_MEMORY, checksum: true, parts: 3, now: NOW, threads: 2 });
  assert.equal(report.linkedUrls, expected.length);
  for (const part of [0, 1, 2]) {
    const want = linkdb.filter((r) => hashPartition(Buffer.from(r.key), 3) === part);
    assert.ok(want.length > 0);
    assert.deepEqual(records<Link[]>(linkdbOf(split, part)), want, `part ${part}`);
  }
});
