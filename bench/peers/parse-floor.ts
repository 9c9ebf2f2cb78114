/**
 * The archive import's floor (issue 29), as the bare undici loop is the
 * gatherer's: what `sherlock import archive` cannot avoid, on one thread.
 *
 *   node dist/bench/peers/parse-floor.js FILE…
 *
 * Reads every record of the ARC/WARC files with the import's own readers
 * (common/archive/archive-read.ts, capture.ts) and parses each capture's
 * body with the gatherer's own parse (parse-worker.ts parseForBucket: HTML,
 * charset, language, the bucket body deflated), the work the issue asks
 * for ("parsed as the gatherer parses a fetch"). Nothing else: no bucket
 * file, no known-capture keys, no revisit resolution, no worker threads. So
 * an import on T parse threads cannot beat T times this rate.
 * Prints {"records":N,"parsed":N}.
 */

import { openArchive } from '../../common/archive/archive-read.js';
import { captureOfArc, captureOfWarc } from '../../common/archive/capture.js';
import { httpResult } from '../../gatherer/outcome.js';
import { parseForBucket } from '../../gatherer/parse-worker.js';

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: parse-floor FILE…\n');
  process.exit(2);
}

let records = 0;
let parsed = 0;
for (const file of files) {
  const reader = openArchive(file);
  try {
    const fileDate = 'versionDate' in reader ? reader.versionDate() : undefined;
    for (const record of reader.records()) {
      records += 1;
      const capture = 'content' in record ? captureOfArc(record, fileDate) : captureOfWarc(record);
      // The import parses what a fetch would (outcome ok): not redirects, errors or revisits.
      if (capture === undefined || capture.revisit !== undefined || httpResult(capture.url, capture.status, capture.statusText, undefined).outcome !== 'ok') continue;
      const result = await parseForBucket(capture.body, { url: capture.url, headers: capture.headers, maxDecodedSize: 32 * 2 ** 20 });
      if (result.parsed !== undefined) parsed += 1;
    }
  } finally {
    reader.close();
  }
}
process.stdout.write(`${JSON.stringify({ records, parsed })}\n`);
