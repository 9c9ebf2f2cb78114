/**
 * Language detectors from npm compared on Debian's translated documentation
 * (issue 28): accuracy on short and long samples, per language and overall, and
 * microseconds per sample of each size, all measured in one run on the same
 * samples (`samples.ts` says how they are cut). Then sherlock's own rule
 * (`common/language/detect.ts`: the chosen detector plus the page's declared
 * language) with no declared language, a right one, and `en` declared on every
 * page (a site template that says English whatever the page).
 *
 *   npx tsc -p . && node dist/bench/language/compare.js [--runs N] [--short N] [--long N]
 *
 * It installs nothing: the detectors are the project's devDependencies (a
 * missing one is reported and skipped) and the text is in Debian packages it
 * names when they are absent. A sample counts as right when the detector names
 * the package's language; an empty or "und" answer counts as wrong.
 */

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { LANGUAGES, loadSamples, missingPackages } from './samples.js';
import type { Sample, SampleSize } from './samples.js';

interface Detector {
  readonly name: string;
  /** Milliseconds its import and set-up took (the tables loaded), once per thread. */
  readonly loadMs: number;
  /** ISO 639-1 code of the text's language, or anything else for none. */
  detect(text: string): string;
}

interface Candidate {
  readonly label: string;
  readonly pkg: string;
  /** Loads the package; throws when it is not installed. */
  make(): Promise<(text: string) => string>;
}

/** franc answers in ISO 639-3; the corpus's languages in that form (cmn is Mandarin, franc's name for written Chinese). */
const FROM_639_3: Record<string, string> = {
  eng: 'en', deu: 'de', fra: 'fr', spa: 'es', ita: 'it', por: 'pt', jpn: 'ja', cmn: 'zh', ind: 'id',
  ces: 'cs', fin: 'fi', nld: 'nl', rus: 'ru', cat: 'ca', vie: 'vi',
};

const require = createRequire(import.meta.url);

/** The installed version of a package (read from its package.json: some export no `./package.json`). */
function version(pkg: string): string {
  for (const dir of require.resolve.paths(pkg) ?? []) {
    const file = join(dir, pkg, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return '?';
}

const CANDIDATES: readonly Candidate[] = [
  {
    label: 'franc',
    pkg: 'franc',
    make: async () => {
      const { franc } = await import('franc');
      return (text) => FROM_639_3[franc(text)] ?? franc(text);
    },
  },
  {
    label: 'franc-min',
    pkg: 'franc-min',
    make: async () => {
      const { franc } = await import('franc-min');
      return (text) => FROM_639_3[franc(text)] ?? franc(text);
    },
  },
  {
    label: 'eld (large)',
    pkg: 'eld',
    make: async () => {
      const { eld } = await import('eld/large');
      return (text) => eld.detect(text).language;
    },
  },
  {
    label: 'eld (small)',
    pkg: 'eld',
    make: async () => {
      const { eld } = await import('eld/small');
      return (text) => eld.detect(text).language;
    },
  },
  {
    label: 'eld (extrasmall)',
    pkg: 'eld',
    make: async () => {
      const { eld } = await import('eld/extrasmall');
      return (text) => eld.detect(text).language;
    },
  },
  {
    label: 'tinyld',
    pkg: 'tinyld',
    make: async () => {
      const { detect } = await import('tinyld');
      return (text) => detect(text);
    },
  },
  {
    label: 'tinyld (heavy)',
    pkg: 'tinyld',
    make: async () => {
      const { detect } = await import('tinyld/heavy');
      return (text) => detect(text);
    },
  },
  {
    label: 'cld3-asm',
    pkg: 'cld3-asm',
    make: async () => {
      const { loadModule } = await import('cld3-asm');
      const cld = await loadModule();
      // Its own defaults for a web page: bytes 0 (no minimum) to 1,000 looked at.
      const identifier = cld.create(0, 1000);
      return (text) => identifier.findLanguage(text).language.replace(/-.*/, '');
    },
  },
];

interface Tally {
  right: number;
  total: number;
  micros: number[];
}

interface Result {
  readonly name: string;
  readonly bySize: Record<SampleSize, Tally>;
  /** Right answers per language and size. */
  readonly byLang: Map<string, Record<SampleSize, { right: number; total: number }>>;
  /** The most frequent wrong answers on short samples, "label→answer". */
  readonly confusions: Map<string, number>;
}

const SIZES: readonly SampleSize[] = ['short', 'long'];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** Accuracy on the first pass; the time of each of `runs` passes over every sample of one size, in µs per sample. */
function measure(detector: Detector, samples: readonly Sample[], runs: number): Result {
  const result: Result = {
    name: detector.name,
    bySize: { short: { right: 0, total: 0, micros: [] }, long: { right: 0, total: 0, micros: [] } },
    byLang: new Map(),
    confusions: new Map(),
  };
  for (const size of SIZES) {
    const some = samples.filter((s) => s.size === size);
    // Warm-up: lazy tables and the JIT, outside the clock.
    for (const sample of some.slice(0, 50)) detector.detect(sample.text);
    for (let run = 0; run < runs; run++) {
      const answers: string[] = new Array(some.length);
      const start = performance.now();
      for (let i = 0; i < some.length; i++) answers[i] = detector.detect(some[i]!.text);
      result.bySize[size].micros.push(((performance.now() - start) * 1000) / some.length);
      if (run > 0) continue;
      for (let i = 0; i < some.length; i++) {
        const sample = some[i]!;
        const ok = answers[i] === sample.lang;
        const tally = result.bySize[size];
        tally.total++;
        if (ok) tally.right++;
        let perLang = result.byLang.get(sample.lang);
        if (perLang === undefined) {
          perLang = { short: { right: 0, total: 0 }, long: { right: 0, total: 0 } };
          result.byLang.set(sample.lang, perLang);
        }
        perLang[size].total++;
        if (ok) perLang[size].right++;
        else if (size === 'short') {
          const key = `${sample.lang}→${answers[i] === '' ? '(none)' : answers[i]}`;
          result.confusions.set(key, (result.confusions.get(key) ?? 0) + 1);
        }
      }
    }
  }
  return result;
}

function percent(right: number, total: number): string {
  return total === 0 ? '–' : `${((100 * right) / total).toFixed(1)}`;
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** The declared language of each scenario for a sample of language `lang`. */
const SCENARIOS: readonly { readonly name: string; readonly declared: (lang: string) => string | undefined }[] = [
  { name: 'none declared', declared: () => undefined },
  { name: 'right one declared', declared: (lang) => lang },
  { name: '`en` declared on every page', declared: () => 'en' },
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      short: { type: 'string', default: '300' },
      long: { type: 'string', default: '150' },
    },
  });
  const runs = Math.max(1, Number(values.runs));
  const missing = missingPackages();
  if (missing.length > 0) {
    process.stderr.write(
      `compare: ${missing.length} Debian package(s) of the corpus are not installed; their languages have fewer samples or none:\n` +
        `  apt-get install -y --no-install-recommends ${missing.join(' ')}\n`,
    );
  }
  const samples = loadSamples({ short: Number(values.short), long: Number(values.long) });
  if (samples.length === 0) {
    process.stderr.write('compare: no samples: install the packages above\n');
    process.exitCode = 1;
    return;
  }
  const count = (size: SampleSize): number => samples.filter((s) => s.size === size).length;
  const mean = (size: SampleSize): number =>
    samples.filter((s) => s.size === size).reduce((sum, s) => sum + s.text.length, 0) / count(size);
  const langs = LANGUAGES.filter((lang) => samples.some((s) => s.lang === lang));
  console.log(`# Language detectors on Debian's documentation (${new Date().toISOString()})\n`);
  console.log(
    `${samples.length} samples in ${langs.length} languages: ${count('short')} short (mean ${mean('short').toFixed(0)} characters), ` +
      `${count('long')} long (mean ${mean('long').toFixed(0)}); node ${process.version}; time per sample is the median of ${runs} passes.\n`,
  );

  const detectors: Detector[] = [];
  for (const candidate of CANDIDATES) {
    try {
      const start = performance.now();
      const detect = await candidate.make();
      detectors.push({ name: `${candidate.label} ${version(candidate.pkg)}`, loadMs: performance.now() - start, detect });
    } catch (error) {
      process.stderr.write(`compare: ${candidate.label} skipped (npm ci installs the devDependencies): ${String(error)}\n`);
    }
  }
  // Imported after the candidates so that each one's load time is its own; its table is eld (small)'s, loaded by now.
  const { detectLanguage } = await import('../../common/language/detect.js');
  detectors.push({ name: 'sherlock detectLanguage', loadMs: NaN, detect: (text) => detectLanguage(text, {}).lang });

  const results = detectors.map((detector) => measure(detector, samples, runs));
  console.log('## Overall\n');
  console.log(
    table(
      ['detector', 'short: % right', 'long: % right', 'short: µs/sample', 'long: µs/sample', 'load: ms'],
      results.map((r, i) => [
        r.name,
        percent(r.bySize.short.right, r.bySize.short.total),
        percent(r.bySize.long.right, r.bySize.long.total),
        median(r.bySize.short.micros).toFixed(1),
        median(r.bySize.long.micros).toFixed(1),
        Number.isNaN(detectors[i]!.loadMs) ? '–' : detectors[i]!.loadMs.toFixed(0),
      ]),
    ),
  );
  for (const size of SIZES) {
    console.log(`\n## Per language, ${size} samples (% right)\n`);
    console.log(
      table(
        ['detector', ...langs.map((lang) => `${lang} (${samples.filter((s) => s.lang === lang && s.size === size).length})`)],
        results.map((r) => [r.name, ...langs.map((lang) => percent(r.byLang.get(lang)?.[size].right ?? 0, r.byLang.get(lang)?.[size].total ?? 0))]),
      ),
    );
  }
  console.log('\n## Most frequent mistakes on short samples (label→answer: count)\n');
  for (const r of results) {
    const top = [...r.confusions].sort((a, b) => b[1] - a[1]).slice(0, 6);
    console.log(`- ${r.name}: ${top.map(([key, n]) => `${key}: ${n}`).join(', ') || 'none'}`);
  }

  console.log('\n## With the declared language (`detectLanguage(text, { declared })`, % right)\n');
  const rows: string[][] = [];
  for (const scenario of SCENARIOS) {
    const row = [scenario.name];
    for (const size of SIZES) {
      let right = 0;
      let total = 0;
      let nonEnglishRight = 0;
      let nonEnglish = 0;
      for (const sample of samples) {
        if (sample.size !== size) continue;
        const ok = detectLanguage(sample.text, { declared: scenario.declared(sample.lang) }).lang === sample.lang;
        total++;
        if (ok) right++;
        if (sample.lang !== 'en') {
          nonEnglish++;
          if (ok) nonEnglishRight++;
        }
      }
      row.push(percent(right, total), percent(nonEnglishRight, nonEnglish));
    }
    rows.push(row);
  }
  console.log(table(['declared', 'short', 'short, not English', 'long', 'long, not English'], rows));
}

await main();
