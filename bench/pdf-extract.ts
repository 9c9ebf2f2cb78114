/**
 * The `pdf` part (issue 30): PDF text extraction with every core, sherlock
 * next to poppler's pdftotext on the same files in the same run, and the
 * floor that bounds sherlock (pdf.js's own text extraction). The files are
 * the PDFs Debian ships in PDF_PACKAGES (manuals in eight languages, two
 * typesetters); each is read whole by each engine.
 *
 *   pdftotext        `xargs -P THREADS -n 2 pdftotext -q -enc UTF-8 IN OUT`
 *   floor            bench/peers/pdfjs-floor.ts: getTextContent() of every
 *                    page, THREADS worker threads
 *   sherlock         bench/pdf-run.ts: the gatherer's parse pool, THREADS
 *                    capped document workers (text, layout, language,
 *                    bucket body)
 *
 * Then, untimed: sherlock's text of each file (gatherer/pdf.ts) against
 * pdftotext's, by words (pdf-words.ts); the table gives the lowest
 * agreement of any file, the notes every file's.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import { plainText, TextBuilder } from '../common/bucket/doc-text.js';
import { MAX_TEXT_BYTES } from '../gatherer/parse.js';
import { parsePdf } from '../gatherer/pdf.js';
import { ensurePackages, isInstalled } from './corpus.js';
import { check, run } from './measure.js';
import type { BenchContext } from './parts.js';
import { wordAgreement } from './pdf-words.js';
import type { Row, Table } from './report.js';

/** Debian packages whose PDFs are the set. */
export const PDF_PACKAGES = [
  'maint-guide',
  'maint-guide-fr',
  'maint-guide-ru',
  'maint-guide-vi',
  'maint-guide-ja',
  'maint-guide-zh-cn',
  'debian-reference-en',
  'debian-reference-de',
  'debian-reference-ja',
  'debian-reference-zh-cn',
  'libtasn1-doc',
  'shared-mime-info',
  'poppler-utils',
];

function pdfFiles(): string[] {
  const files: string[] = [];
  for (const pkg of PDF_PACKAGES) {
    const listed = spawnSync('dpkg', ['-L', pkg], { encoding: 'utf8' });
    for (const line of listed.stdout.split('\n')) if (line.endsWith('.pdf')) files.push(line);
  }
  return [...new Set(files)].sort();
}

interface Figures {
  ms: number;
  peakRss: number | undefined;
}

function row(name: string, f: Figures, pages: number, bytes: number, extra: Record<string, number> = {}): Row {
  const s = f.ms / 1000;
  return { name, status: 'ok', values: { pages, s, pagesPerS: pages / s, mbPerS: bytes / 1e6 / s, ...(f.peakRss === undefined ? {} : { rss: f.peakRss }), ...extra } };
}

export async function pdfTable(ctx: BenchContext, footnotes: string[]): Promise<Table> {
  if (ctx.opts.noInstall) {
    const missing = PDF_PACKAGES.filter((p) => !isInstalled(p));
    if (missing.length > 0) throw new Error(`missing Debian packages (and --no-install): ${missing.join(' ')}`);
  } else {
    ensurePackages(PDF_PACKAGES, ctx.log);
  }
  const files = pdfFiles();
  const threads = availableParallelism();
  const bytes = files.reduce((sum, file) => sum + statSync(file).size, 0);
  const out = join(ctx.workDir, 'pdf');
  mkdirSync(out, { recursive: true });
  const texts = files.map((file, i) => join(out, `${i}-${basename(file)}.txt`));

  ctx.log(`pdf: pdftotext, ${files.length} files, ${threads} at a time`);
  const pairs = files.flatMap((file, i) => [file, texts[i]!]).join('\n') + '\n';
  const poppler = check('pdftotext', await run('xargs', ['-d', '\\n', '-P', String(threads), '-n', '2', 'pdftotext', '-q', '-enc', 'UTF-8'], { input: pairs, timeoutMs: 1_800_000 }));
  ctx.log('pdf: pdf.js floor');
  const floorRun = check('pdf.js floor', await run(process.execPath, [join(ctx.distDir, 'peers', 'pdfjs-floor.js'), String(threads), ...files], { timeoutMs: 1_800_000 }));
  const floor = JSON.parse(floorRun.stdout) as { ms: number; pages: number };
  ctx.log('pdf: sherlock');
  const ours = check('sherlock pdf', await run(process.execPath, [join(ctx.distDir, 'pdf-run.js'), String(threads), ...files], { timeoutMs: 1_800_000 }));
  const mine = JSON.parse(ours.stdout) as { ms: number; parsed: number; refused: number };

  ctx.log('pdf: word agreement');
  const agreements: string[] = [];
  let lowest = 1;
  for (const [i, file] of files.entries()) {
    const text = new TextBuilder(MAX_TEXT_BYTES);
    const fields = await parsePdf(readFileSync(file), 'http://127.0.0.1/doc.pdf', text);
    const { agreement, words } = wordAgreement(readFileSync(texts[i]!, 'utf8'), plainText(text.finish()));
    lowest = Math.min(lowest, agreement);
    agreements.push(`${basename(file)} ${fields.pages} pages, ${words.toLocaleString('en')} words: ${(agreement * 100).toFixed(1)} %${text.cut ? ' (text cut at the 2 MiB cap)' : ''}`);
  }

  footnotes.push(
    `PDF: ${files.length} PDFs of Debian's ${PDF_PACKAGES.filter((p) => p !== 'poppler-utils').join(', ')}; ${threads} threads or processes each. pdftotext: \`xargs -P ${threads} -n 2 pdftotext -q -enc UTF-8 IN OUT\`; floor: \`node dist/bench/peers/pdfjs-floor.js ${threads} FILE…\` (pdf.js getTextContent of every page, nothing else); sherlock: \`node dist/bench/pdf-run.js ${threads} FILE…\` (the gatherer's parse pool: pdf.js, layout, language, bucket body). The figures are each run's own wall time; peak RSS is the whole process tree's largest process.`,
  );
  return {
    id: 'pdf',
    title: `PDF text extraction — ${files.length} Debian PDFs, ${floor.pages.toLocaleString('en')} pages, ${(bytes / 1e6).toFixed(1)} MB`,
    subtitle: `Every core (${threads}) on each side, one run each. Target: ≥ 0.5× pdftotext's pages/s, and each file's words ≥ 95 % the same as pdftotext's.`,
    columns: [
      { key: 'pages', label: 'pages', format: 'int' },
      { key: 's', label: 'time s', format: 's' },
      { key: 'pagesPerS', label: 'pages/s', format: 'dec1' },
      { key: 'mbPerS', label: 'MB/s', format: 'dec2' },
      { key: 'rss', label: 'peak RSS MiB', format: 'mib' },
      { key: 'agreement', label: 'lowest word agreement %', format: 'dec1' },
    ],
    ratios: [{ key: 'pagesPerS', label: 'pages/s', better: 'higher' }],
    peers: [row(`pdftotext (poppler-utils)`, { ms: poppler.wallMs, peakRss: poppler.peakRss }, floor.pages, bytes), row('floor: pdf.js getTextContent', { ms: floor.ms, peakRss: floorRun.peakRss }, floor.pages, bytes)],
    sherlock: row('sherlock', { ms: mine.ms, peakRss: ours.peakRss }, floor.pages, bytes, { agreement: lowest * 100 }),
    notes: [`Word agreement with pdftotext, per file: ${agreements.join('; ')}.`, ...(mine.refused > 0 ? [`${mine.refused} files refused by sherlock (see the log).`] : [])],
  };
}
