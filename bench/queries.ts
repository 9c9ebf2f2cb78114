/**
 * The query set: a few hundred queries drawn from the extracted text, saved in
 * bench/queries/<set>.tsv and committed, so every run (and every peer) answers
 * the same queries. A saved file is used as it is; it is generated only when
 * missing (or with --new-queries).
 *
 * Kinds: `common` (one frequent word), `rare` (one word in 2–5 pages), `and2`
 * and `and3` (two or three words from one page, all required), `phrase2` and
 * `phrase3` (two or three adjacent words of one page, in quotes).
 *
 * Words are what every engine tokenises the same way: white-space separated
 * tokens of 3–20 ASCII letters once surrounding punctuation is trimmed,
 * lower-cased. Anything else between two words breaks a phrase. Generation is
 * deterministic: the same text gives the same file (a seeded PRNG, documents
 * in file order).
 *
 * File format: '#' comment lines, then `kind TAB query` per line, the query in
 * sherlock's query language (words are ANDed, "…" is a phrase).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { readTextFile } from './extract.js';

/** The kinds the generator draws. */
export type GeneratedKind = 'common' | 'rare' | 'and2' | 'and3' | 'phrase2' | 'phrase3';
/** `judged`: a query of a relevance set (bench/relevance/), plain words ANDed; never generated here. */
export type QueryKind = GeneratedKind | 'judged';
/** The generated kinds, in the order a generated file lists them. */
export const QUERY_KINDS: readonly QueryKind[] = ['common', 'rare', 'and2', 'and3', 'phrase2', 'phrase3'];

export interface Query {
  readonly kind: QueryKind;
  /** The query in sherlock's language. */
  readonly q: string;
  /** The words, in order. */
  readonly words: readonly string[];
  readonly phrase: boolean;
}

/** How many queries of each kind a generated set has (300 in all). */
export const DEFAULT_MIX: Readonly<Record<GeneratedKind, number>> = {
  common: 50,
  rare: 50,
  and2: 60,
  and3: 40,
  phrase2: 60,
  phrase3: 40,
};

const WORD = /^[a-z]{3,20}$/;
const TRIM = /^[("'`[{<«“‘]+|[)"'`\]}>».,;:!?”’]+$/g;

/**
 * The candidate words of a text in order; `null` marks a token that is not a
 * word (it breaks adjacency for phrases).
 */
export function tokens(text: string): Array<string | null> {
  const out: Array<string | null> = [];
  for (const raw of text.split(' ')) {
    if (raw === '') continue;
    const t = raw.replace(TRIM, '');
    const trimmedEnd = t.length < raw.length && !raw.endsWith(t);
    const w = t.toLowerCase();
    if (WORD.test(w)) {
      out.push(w);
      // Punctuation after a word ends a phrase there ("key, value" is no phrase).
      if (trimmedEnd) out.push(null);
    } else out.push(null);
  }
  return out;
}

/** A small, fast, seedable PRNG (mulberry32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

export function makeQuery(kind: QueryKind, words: readonly string[]): Query {
  const phrase = kind === 'phrase2' || kind === 'phrase3';
  return { kind, words, phrase, q: phrase ? `"${words.join(' ')}"` : words.join(' ') };
}

export interface GenerateOptions {
  seed: number;
  mix?: Readonly<Record<GeneratedKind, number>>;
}

/**
 * Generates a query set from documents (each a text). Pure and deterministic:
 * the same documents and seed give the same queries.
 */
export function generateQueries(docs: () => Iterable<string>, opts: GenerateOptions): Query[] {
  const mix = opts.mix ?? DEFAULT_MIX;
  const rand = mulberry32(opts.seed);
  // Pass 1: document frequencies.
  const df = new Map<string, number>();
  let n = 0;
  for (const text of docs()) {
    n++;
    for (const w of new Set(tokens(text))) if (w !== null) df.set(w, (df.get(w) ?? 0) + 1);
  }
  if (n === 0) return [];
  const byDf = [...df.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const common = byDf.slice(0, Math.max(1, Math.min(200, Math.ceil(byDf.length / 10)))).map(([w]) => w);
  const rare = byDf.filter(([, c]) => c >= 2 && c <= 5).map(([w]) => w);
  // The most frequent words are left out of multi-word queries (they are the `common` kind's job).
  const stop = new Set(byDf.slice(0, Math.min(30, Math.floor(byDf.length / 10))).map(([w]) => w));
  const out: Query[] = [];
  const seen = new Set<string>();
  const add = (q: Query): boolean => {
    if (seen.has(q.q)) return false;
    seen.add(q.q);
    out.push(q);
    return true;
  };
  const fill = (kind: GeneratedKind, want: number, make: () => Query | undefined): void => {
    let got = 0;
    for (let tries = 0; got < want && tries < want * 50; tries++) {
      const q = make();
      if (q !== undefined && add(q)) got++;
    }
  };
  fill('common', mix.common, () => (common.length === 0 ? undefined : makeQuery('common', [pick(rand, common)])));
  fill('rare', mix.rare, () => (rare.length === 0 ? undefined : makeQuery('rare', [pick(rand, rare)])));
  // Pass 2: multi-word queries from sampled documents.
  const sampled = new Map<number, Array<number>>(); // doc index → slots
  const slots: Array<{ kind: GeneratedKind; doc: number }> = [];
  const kinds: GeneratedKind[] = ['and2', 'and3', 'phrase2', 'phrase3'];
  for (const kind of kinds) {
    for (let i = 0; i < mix[kind] * 4; i++) {
      const doc = Math.floor(rand() * n);
      slots.push({ kind, doc });
      const list = sampled.get(doc) ?? [];
      list.push(slots.length - 1);
      sampled.set(doc, list);
    }
  }
  const docTokens = new Map<number, Array<string | null>>();
  let index = 0;
  for (const text of docs()) {
    if (sampled.has(index)) docTokens.set(index, tokens(text));
    index++;
  }
  const got: Record<string, number> = { and2: 0, and3: 0, phrase2: 0, phrase3: 0 };
  for (const slot of slots) {
    if (got[slot.kind]! >= mix[slot.kind]) continue;
    const toks = docTokens.get(slot.doc) ?? [];
    const q = multiWord(slot.kind, toks, df, stop, rand);
    if (q !== undefined && add(q)) got[slot.kind]!++;
  }
  // Stable order: by kind as listed, then as drawn.
  return QUERY_KINDS.flatMap((k) => out.filter((q) => q.kind === k));
}

function multiWord(
  kind: QueryKind,
  toks: ReadonlyArray<string | null>,
  df: ReadonlyMap<string, number>,
  stop: ReadonlySet<string>,
  rand: () => number,
): Query | undefined {
  const words = toks.filter((t): t is string => t !== null);
  if (words.length < 3) return undefined;
  if (kind === 'and2' || kind === 'and3') {
    const k = kind === 'and2' ? 2 : 3;
    const chosen = new Set<string>();
    for (let tries = 0; chosen.size < k && tries < 40; tries++) {
      const w = pick(rand, words);
      if ((df.get(w) ?? 0) >= 3 && !stop.has(w)) chosen.add(w);
    }
    return chosen.size === k ? makeQuery(kind, [...chosen]) : undefined;
  }
  const k = kind === 'phrase2' ? 2 : 3;
  for (let tries = 0; tries < 40; tries++) {
    const start = Math.floor(rand() * (toks.length - k + 1));
    const run = toks.slice(start, start + k);
    if (run.length === k && run.every((t) => t !== null)) {
      const ws = run as string[];
      if (new Set(ws).size === k) return makeQuery(kind, ws);
    }
  }
  return undefined;
}

/** Parses a query line in sherlock's language (only what the generator writes: words, or one quoted phrase). */
export function parseQueryLine(kind: QueryKind, q: string): Query {
  const phrase = q.startsWith('"') && q.endsWith('"') && q.length >= 2;
  const words = (phrase ? q.slice(1, -1) : q).split(' ').filter((w) => w !== '');
  return { kind, q, words, phrase };
}

export function formatQueryFile(queries: readonly Query[], header: readonly string[]): string {
  return [...header.map((h) => `# ${h}`), ...queries.map((q) => `${q.kind}\t${q.q}`)].join('\n') + '\n';
}

export function parseQueryFile(text: string): Query[] {
  const out: Query[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const tab = line.indexOf('\t');
    if (tab < 0) throw new Error(`query file: no tab in line ${JSON.stringify(line)}`);
    const kind = line.slice(0, tab) as QueryKind;
    if (kind !== 'judged' && !QUERY_KINDS.includes(kind)) throw new Error(`query file: unknown kind ${kind}`);
    out.push(parseQueryLine(kind, line.slice(tab + 1)));
  }
  return out;
}

/** Seed of a set's query generation (stable across runs). */
export function seedFor(set: string): number {
  let h = 0x5eed;
  for (let i = 0; i < set.length; i++) h = Math.imul(h ^ set.charCodeAt(i), 0x9e3779b1) >>> 0;
  return h;
}

/** Loads the committed query set, generating it from the extracted text when missing. */
export function loadOrGenerate(file: string, textFile: string, set: string, regenerate: boolean, log: (line: string) => void): Query[] {
  if (!regenerate) {
    try {
      return parseQueryFile(readFileSync(file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  const queries = generateQueries(
    () => (function* () {
      for (const doc of readTextFile(textFile)) yield doc.title + ' ' + doc.text;
    })(),
    { seed: seedFor(set) },
  );
  writeFileSync(
    file,
    formatQueryFile(queries, [
      `sherlock benchmark queries for the ${set} set: kind TAB query (sherlock query language: words ANDed, "…" a phrase).`,
      'Generated once by bench/queries.ts from the extracted text of the set (seeded, deterministic); kept so runs are comparable.',
    ]),
  );
  log(`generated ${queries.length} queries → ${file}`);
  return queries;
}
