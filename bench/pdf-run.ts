/**
 * sherlock's side of the bench's PDF part (bench/pdf-extract.ts):
 *
 *   node dist/bench/pdf-run.js THREADS FILE…
 *
 * Parses every file as the gatherer parses a fetched PDF: through the parse
 * pool's capped document workers (gatherer/parse-pool.ts, THREADS of them,
 * the default caps), pdf.js's text, the language detected, the bucket body
 * deflated; all files handed over at once, as a crawl's would be. Prints
 * {"ms":…,"parsed":N,"refused":N} with the wall time from the first hand-over
 * to the last result, worker start-up included.
 */

import { readFileSync } from 'node:fs';
import { ParsePool } from '../gatherer/parse-pool.js';

const [threads, ...files] = process.argv.slice(2);
if (threads === undefined || files.length === 0 || !/^\d+$/.test(threads)) {
  process.stderr.write('usage: pdf-run THREADS FILE…\n');
  process.exit(2);
}

const bodies = files.map((file) => readFileSync(file));
const pool = new ParsePool(Number(threads), { time: 600_000, memory: 2 ** 30 });
const started = performance.now();
const results = await Promise.all(bodies.map((body, i) => pool.parse(body, { url: `http://127.0.0.1/${i}.pdf`, headers: [['Content-Type', 'application/pdf']], maxDecodedSize: 32 * 2 ** 20 })));
const ms = performance.now() - started;
await pool.close();
const refused = results.filter((r) => r.parsed?.refused !== undefined || r.parsed === undefined);
for (const r of refused) process.stderr.write(`refused: ${r.parsed?.refused?.message ?? r.problem ?? '?'}\n`);
process.stdout.write(JSON.stringify({ ms, parsed: results.length - refused.length, refused: refused.length }) + '\n');
