/**
 * Labelled text for comparing language detectors: Debian's translated
 * documentation, whose packages each hold one known language, cut into samples
 * of two sizes as sherlock meets them:
 *
 *   short — a heading and the first sentence after it, 40–200 characters: what
 *           a search result or a short page gives a detector;
 *   long  — about 2,000 characters of a section's body text (paragraphs, list
 *           items, tables and the code blocks among them) from its heading on.
 *
 * Technical documentation keeps English commands, file names and code in its
 * translations; the samples keep them too, as a crawled page would. What they
 * drop is prose a translation left in English: a heading or paragraph (not a
 * code block) found word for word in the English edition of the same page is
 * not text of the package's language, so it is left out rather than mislabelled
 * (up to 42 % of the paragraphs of some translations are such leftovers); so is
 * a paragraph thick with English function words (`leftInEnglish`:
 * an older English original the translation kept).
 *
 * Nothing here installs anything: `missingPackages()` names what is absent, and
 * the caller says so. Samples are deterministic: the files in sorted order, every
 * section in order, then an evenly spaced choice up to the cap per language.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Parser } from 'htmlparser2';

export type SampleSize = 'short' | 'long';

export interface Sample {
  /** ISO 639-1 code of the package's language. */
  readonly lang: string;
  readonly size: SampleSize;
  readonly text: string;
  /** The package and file it was cut from. */
  readonly source: string;
}

/** One translated manual: where its pages are and where each page's English edition is. */
interface Manual {
  readonly pkg: string;
  readonly lang: string;
  /** The HTML pages of this language. */
  pages(): string[];
  /** The English edition of a page, or undefined when this is English or there is none. */
  english(page: string): string | undefined;
}

const REFERENCE_DIR = '/usr/share/debian-reference';
const APTITUDE_DIR = '/usr/share/doc/aptitude/html';

function filesIn(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter(keep).sort().map((name) => join(dir, name));
}

function existing(path: string): string | undefined {
  return existsSync(path) ? path : undefined;
}

/** debian-reference-LL: /usr/share/debian-reference/NAME.LL.html, one directory for every language. */
function reference(lang: string, suffix = lang): Manual {
  const tail = `.${suffix}.html`;
  return {
    pkg: `debian-reference-${suffix}`,
    lang,
    pages: () => filesIn(REFERENCE_DIR, (n) => n.endsWith(tail)),
    english: (page) => (lang === 'en' ? undefined : existing(page.slice(0, -tail.length) + '.en.html')),
  };
}

/** aptitude-doc-LL: /usr/share/doc/aptitude/html/LL/*.html. */
function aptitude(lang: string): Manual {
  return {
    pkg: `aptitude-doc-${lang}`,
    lang,
    pages: () => filesIn(join(APTITUDE_DIR, lang), (n) => n.endsWith('.html')),
    english: (page) => (lang === 'en' ? undefined : existing(join(APTITUDE_DIR, 'en', basename(page)))),
  };
}

/** maint-guide (English) and maint-guide-LL: /usr/share/doc/maint-guide[-LL]/html/NAME.LL.html. */
function maintGuide(lang: string, suffix = lang): Manual {
  const pkg = lang === 'en' ? 'maint-guide' : `maint-guide-${suffix}`;
  const tail = `.${suffix}.html`;
  return {
    pkg,
    lang,
    pages: () => filesIn(`/usr/share/doc/${pkg}/html`, (n) => n.endsWith(tail)),
    english: (page) =>
      lang === 'en' ? undefined : existing(join('/usr/share/doc/maint-guide/html', basename(page).slice(0, -tail.length) + '.en.html')),
  };
}

/** Every manual of the comparison, by language (15 languages, 28 packages). */
export const MANUALS: readonly Manual[] = [
  reference('en'), aptitude('en'), maintGuide('en'),
  reference('de'), maintGuide('de'),
  reference('fr'), aptitude('fr'), maintGuide('fr'),
  reference('es'), aptitude('es'), maintGuide('es'),
  reference('it'), aptitude('it'), maintGuide('it'),
  reference('pt'),
  reference('ja'), aptitude('ja'), maintGuide('ja'),
  reference('zh', 'zh-cn'), maintGuide('zh', 'zh-cn'),
  reference('id'),
  aptitude('cs'), aptitude('fi'), aptitude('nl'),
  aptitude('ru'), maintGuide('ru'),
  maintGuide('ca'), maintGuide('vi'),
];

/** The languages of the corpus, in the order of MANUALS. */
export const LANGUAGES: readonly string[] = [...new Set(MANUALS.map((m) => m.lang))];

/** The Debian packages of MANUALS that are not installed (dpkg-query), in order. */
export function missingPackages(): string[] {
  const names = MANUALS.map((m) => m.pkg);
  let out = '';
  try {
    out = execFileSync('dpkg-query', ['-W', '-f', '${Package} ${db:Status-Status}\n', ...names], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch (error) {
    // dpkg-query exits 1 when some name is unknown but still prints the rest.
    out = String((error as { stdout?: unknown }).stdout ?? '');
  }
  const installed = new Set(
    out.split('\n').filter((line) => line.endsWith(' installed')).map((line) => line.split(' ')[0]),
  );
  return names.filter((name) => !installed.has(name));
}

type BlockKind = 'heading' | 'prose' | 'code';
interface Block {
  readonly kind: BlockKind;
  readonly text: string;
}

const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math']);
const HEADING = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Elements whose text is one prose block when they hold no other block. */
const PROSE = new Set(['p', 'li', 'dt', 'dd', 'td', 'th', 'caption', 'blockquote', 'figcaption']);

function squash(text: string): string {
  return text.replace(/[\s\u00a0]+/g, ' ').trim();
}

/**
 * A page's visible text as blocks in document order: headings, prose and code
 * (`pre`). A block element nested in another ends the outer one's text there, so
 * every character lands in exactly one block.
 */
export function pageBlocks(html: string): Block[] {
  const blocks: Block[] = [];
  const stack: { kind: BlockKind; parts: string[] }[] = [];
  let skip = 0;
  const flush = (): void => {
    const top = stack[stack.length - 1];
    if (top === undefined) return;
    const text = top.kind === 'code' ? top.parts.join('').trim() : squash(top.parts.join(''));
    if (text !== '') blocks.push({ kind: top.kind, text });
    top.parts = [];
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIP.has(name)) skip++;
        const kind: BlockKind | undefined = HEADING.has(name) ? 'heading' : name === 'pre' ? 'code' : PROSE.has(name) ? 'prose' : undefined;
        if (kind === undefined) return;
        flush();
        stack.push({ kind, parts: [] });
      },
      ontext(text) {
        if (skip > 0) return;
        stack[stack.length - 1]?.parts.push(text);
      },
      onclosetag(name) {
        if (SKIP.has(name)) skip = Math.max(0, skip - 1);
        if (!HEADING.has(name) && name !== 'pre' && !PROSE.has(name)) return;
        flush();
        stack.pop();
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.end(html);
  return blocks;
}

/** The first sentence of a paragraph: up to the first ". ", "。", "! " or "? " (kept), or the whole. */
export function firstSentence(text: string): string {
  const match = /^.*?(?:[.!?](?=\s)|[。！？])/su.exec(text);
  return match === null ? text : match[0];
}

/** `text` cut to at most `max` characters at a space when one is near the end. */
function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return space > max * 0.8 ? cut.slice(0, space) : cut;
}

export const SHORT_MIN = 40;
export const SHORT_MAX = 200;
export const LONG_TARGET = 2000;
const LONG_MIN = 1500;

/** The short and long samples of one page's blocks (untranslated prose already removed). */
function pageSamples(blocks: readonly Block[], lang: string, source: string): Sample[] {
  const samples: Sample[] = [];
  for (let i = 0; i < blocks.length; i++) {
    if (blocks[i]!.kind !== 'heading') continue;
    const next = blocks[i + 1];
    if (next?.kind === 'prose') {
      const text = cutAt(`${blocks[i]!.text} ${firstSentence(next.text)}`, SHORT_MAX);
      if (text.length >= SHORT_MIN) samples.push({ lang, size: 'short', text, source });
    }
    // The long sample runs from this heading through the body until it has enough text.
    let body = blocks[i]!.text;
    let j = i + 1;
    for (; j < blocks.length && body.length < LONG_TARGET; j++) body += (blocks[j]!.kind === 'code' ? '\n' : ' ') + blocks[j]!.text;
    if (body.length >= LONG_MIN) {
      samples.push({ lang, size: 'long', text: cutAt(body, LONG_TARGET), source });
      // Long samples do not overlap: the next one starts at a heading after this one.
      while (i + 1 < j && blocks[i + 1]!.kind !== 'heading') i++;
    }
  }
  return samples;
}

/** Words of English prose that no other language of the corpus writes as words of its own. */
const ENGLISH_WORDS = new Set([
  'the', 'and', 'of', 'you', 'your', 'with', 'this', 'that', 'are', 'which', 'from', 'have', 'will', 'can', 'should', 'when', 'there', 'been',
]);

/**
 * Whether a translation's prose block is an English paragraph left untranslated
 * though no longer word for word the English edition's (the original changed
 * since): at least 8 words, of which 15 % or more are ENGLISH_WORDS. English
 * prose runs at 20–30 %; the translations' own prose, commands included, near 0.
 */
function leftInEnglish(text: string): boolean {
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  if (words.length < 8) return false;
  let english = 0;
  for (const word of words) if (ENGLISH_WORDS.has(word)) english++;
  return english / words.length >= 0.15;
}

function readBlocks(path: string): Block[] {
  return pageBlocks(readFileSync(path, 'utf8'));
}

/** Every sample of one manual, with headings and paragraphs left in English dropped. */
function manualSamples(manual: Manual): Sample[] {
  const samples: Sample[] = [];
  for (const page of manual.pages()) {
    let blocks = readBlocks(page);
    const english = manual.english(page);
    if (english !== undefined) {
      const original = new Set(readBlocks(english).filter((b) => b.kind !== 'code').map((b) => b.text));
      blocks = blocks.filter((b) => b.kind === 'code' || !(original.has(b.text) || leftInEnglish(b.text)));
    }
    samples.push(...pageSamples(blocks, manual.lang, `${manual.pkg}:${basename(page)}`));
  }
  return samples;
}

/** `count` items of `items` at evenly spaced positions (all of them when there are fewer). */
function evenly<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  const chosen: T[] = [];
  for (let k = 0; k < count; k++) chosen.push(items[Math.floor((k * items.length) / count)]!);
  return chosen;
}

export interface SampleCaps {
  readonly short: number;
  readonly long: number;
}

/**
 * The labelled samples of every installed manual: per language, distinct texts,
 * at most `caps.short` short and `caps.long` long ones, evenly spread over its
 * manuals' pages.
 */
export function loadSamples(caps: SampleCaps = { short: 300, long: 150 }): Sample[] {
  const missing = new Set(missingPackages());
  const out: Sample[] = [];
  for (const lang of LANGUAGES) {
    const all: Sample[] = [];
    for (const manual of MANUALS) if (manual.lang === lang && !missing.has(manual.pkg)) all.push(...manualSamples(manual));
    const seen = new Set<string>();
    const distinct = all.filter((s) => (seen.has(s.text) ? false : (seen.add(s.text), true)));
    out.push(...evenly(distinct.filter((s) => s.size === 'short'), caps.short));
    out.push(...evenly(distinct.filter((s) => s.size === 'long'), caps.long));
  }
  return out;
}
