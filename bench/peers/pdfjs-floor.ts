/**
 * The PDF part's floor (bench/pdf-extract.ts), as parse-floor.ts is the
 * import's: pdf.js's own text extraction and nothing of sherlock's.
 *
 *   node dist/bench/peers/pdfjs-floor.js THREADS FILE…
 *
 * THREADS worker threads (piscina) each open a file with pdf.js, loaded and
 * opened by gatherer/pdf.ts's own pdfjs() and openPdf(), and take every page's getTextContent();
 * no layout, no language, no bucket. sherlock's PDF parse, which is this and
 * more, cannot beat its rate. Prints {"ms":…,"pages":N}.
 */

import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { openPdf, pdfjs } from '../../gatherer/pdf.js';

/** The worker's task: a file's pages, their text taken and dropped. */
export default async function pages(file: string): Promise<number> {
  const doc = await openPdf(await pdfjs(), readFileSync(file)).promise;
  try {
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      await page.getTextContent();
      page.cleanup();
    }
    return doc.numPages;
  } finally {
    await doc.destroy();
  }
}

if (isMainThread && process.argv[1]?.endsWith('pdfjs-floor.js')) {
  const [threads, ...files] = process.argv.slice(2);
  if (threads === undefined || files.length === 0 || !/^\d+$/.test(threads)) {
    process.stderr.write('usage: pdfjs-floor THREADS FILE…\n');
    process.exit(2);
  }
  const pool = new Piscina({ filename: import.meta.url, minThreads: Number(threads), maxThreads: Number(threads) });
  const started = performance.now();
  const counts = (await Promise.all(files.map((file) => pool.run(file)))) as number[];
  const ms = performance.now() - started;
  await pool.destroy();
  process.stdout.write(JSON.stringify({ ms, pages: counts.reduce((a, b) => a + b, 0) }) + '\n');
}
