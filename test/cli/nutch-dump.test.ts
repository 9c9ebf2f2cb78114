import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { javaFloat } from '../../common/hadoop/io.js';
import { runCli } from '../helpers/cli.js';
import { nutchData } from '../helpers/nutch-data.js';
import { scratchDir } from '../helpers/paths.js';

test('nutch dump prints a crawl_fetch MapFile the way readseg does, with ISO dates', async () => {
  const dir = nutchData('nutch-1.10-segments/20150309101625/crawl_fetch');
  const run = await runCli(['nutch', 'dump', dir]);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(
    run.stdout,
    [
      `File:: ${dir}/part-00000/data`,
      'Recno:: 0',
      'URL:: http://nutch.apache.org/',
      '',
      'CrawlDatum::',
      'Version: 7',
      'Status: 33 (fetch_success)',
      'Fetch time: 2015-03-09T17:16:29.382Z',
      'Modified time: 1970-01-01T00:00:00.000Z',
      'Retries since fetch: 0',
      'Retry interval: 2592000 seconds (30 days)',
      'Score: 1.0',
      'Signature: null',
      'Metadata:',
      '\t_ngt_=1425921383199',
      '\tContent-Type=text/html',
      '\t_pst_=success(1), lastModified=0',
      '\t_rs_=341',
      '',
      '',
    ].join('\n'),
  );
});

test('nutch dump --json walks a whole crawldb: one object per record, parts in order', async () => {
  const run = await runCli(['nutch', 'dump', '--json', nutchData('nutch-1.21-crawl/crawldb')]);
  assert.equal(run.status, 0, run.stderr);
  const lines = run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(lines.length, 2 * 1118, 'current and old');
  assert.deepEqual(lines[0], {
    file: nutchData('nutch-1.21-crawl/crawldb/current/part-r-00000/data'),
    recno: 0,
    offset: 86,
    key: 'http://admission.gatech.edu/visit',
    class: 'org.apache.nutch.crawl.CrawlDatum',
    value: {
      status: 1,
      statusName: 'db_unfetched',
      fetchTime: 1769822793534,
      retries: 0,
      fetchInterval: 2592000,
      score: 0.0001,
      modifiedTime: 0,
      signature: null,
      metadata: {},
    },
  });
});

test('nutch dump reads a whole segment, a linkdb and a plain SequenceFile; it skips files that are not ones', async () => {
  const segment = await runCli(['nutch', 'dump', nutchData('nutch-1.15-crawl')]);
  assert.equal(segment.status, 0, segment.stderr);
  for (const kind of ['CrawlDatum::', 'Content::', 'ParseData::', 'ParseText::']) assert.ok(segment.stdout.includes(`\n${kind}\n`), kind);
  assert.match(segment.stdout, /^Title: Breitbart News Network$/m);
  assert.match(segment.stderr, /skipping .*dump-segments1\/dump: not a SequenceFile/);

  const linkdb = await runCli(['nutch', 'dump', nutchData('nutch-1.21-crawl/linkdb')]);
  assert.equal(linkdb.status, 0, linkdb.stderr);
  assert.match(linkdb.stdout, /^URL:: http:\/\/admission\.gatech\.edu\/visit\n\nInlinks::\n fromUrl: https:\/\/www\.gatech\.edu\/about\/visit anchor: Undergraduate Campus Visit Scheduling$/m);

  const content = await runCli(['nutch', 'dump', '--json', nutchData('commoncrawl-1.22-revisit-segment/20260224170658-revisit/content/part-r-00000/data')]);
  const [, revisit] = content.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { value: { length: number; content: string; metadata: Record<string, string[]> } });
  assert.equal(revisit!.value.length, 0);
  assert.equal(revisit!.value.content, '');
});

test('nutch dump of damaged data stops with exit 1, naming the file and offset', async (t) => {
  const dir = scratchDir(t);
  const file = join(dir, 'part-00000');
  const bytes = readFileSync(nutchData('nutch-1.10-segments/20150309101625/crawl_generate/part-00000'));
  writeFileSync(file, bytes.subarray(0, bytes.length - 3));
  const cut = await runCli(['nutch', 'dump', file]);
  assert.equal(cut.status, 1);
  assert.equal(cut.stderr, `sherlock: ${file}: offset 86: record of 75 bytes runs past the end of the file (166 bytes)\n`);

  writeFileSync(file, 'PAR1 not hadoop');
  const foreign = await runCli(['nutch', 'dump', file]);
  assert.equal(foreign.status, 1);
  assert.equal(foreign.stderr, `sherlock: ${file}: offset 0: not a SequenceFile (no "SEQ" magic)\n`);

  const missing = await runCli(['nutch', 'dump', join(dir, 'nothing')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /nothing: no such file or directory/);
});

test('scores print as Java (19 and later: shortest digits) prints floats', () => {
  assert.deepEqual([1, Math.fround(0.01), Math.fround(1e-4), 0, Math.fround(123456789), Math.fround(2.5)].map(javaFloat), ['1.0', '0.01', '1.0E-4', '0.0', '1.2345679E8', '2.5']);
});
