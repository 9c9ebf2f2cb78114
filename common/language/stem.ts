/**
 * Word forms: the stem of a word under its language's stemmer — a Snowball
 * stemmer (snowball-stemmers, Oleg Mazko's port of the Snowball
 * algorithms), for Czech the light stemmer of czech-stem.ts — the key that
 * puts "bridge", "bridges" and "bridging" in one stem class. The indexer
 * stems each word once, with the language it is first met in
 * (stemLanguage), and the Lexicon keeps (language, stem) per word; the
 * searcher stems a query word in the query's languages and takes the words
 * of each class it finds.
 *
 * A stemmer reads the exact form (with its accents: Czech endings such as
 * -ého and -ů are told by them), and the stem is kept plain (common/words.ts:
 * accents removed), so that "koláčů" and "koláče" meet in "kolak". A query
 * typed without accents ("kolacu") is stemmed as typed and also as each of
 * its accent variants the Lexicon has ("koláčů"): IndexVersion#wordForms.
 *
 * A word's language is the document's, unless its letters say otherwise:
 * a letter the document's language does not write (č in an English page
 * naming a Czech dish) picks the first language, in LETTER_ORDER, whose
 * alphabet has every such letter of the word. Words of fewer than
 * MIN_STEM_CHARS characters, numbers and words with digits, and words of a
 * language without a stemmer are their own stems.
 */

import { createRequire } from 'node:module';
import { stem as porter2 } from 'porter2';
import type { Stemmer } from 'snowball-stemmers';
import { plainForm } from '../words.js';
import { czechStem } from './czech-stem.js';
import { languageCode } from './codes.js';

// Required, not imported: an ESM import of this 868 KB CommonJS file has Node scan all of it for
// named exports, in every indexer and search thread (0.3 s of CPU a medium-set build; issue 28's cost).
const snowball = createRequire(import.meta.url)('snowball-stemmers') as typeof import('snowball-stemmers');

/** ISO 639-1 code → the Snowball algorithm's name in snowball-stemmers (Czech's is czech-stem.ts instead). */
const ALGORITHMS: Readonly<Record<string, string>> = {
  ar: 'arabic',
  ca: 'catalan',
  cs: 'czech',
  da: 'danish',
  de: 'german',
  en: 'english',
  es: 'spanish',
  eu: 'basque',
  fi: 'finnish',
  fr: 'french',
  ga: 'irish',
  hu: 'hungarian',
  hy: 'armenian',
  it: 'italian',
  nb: 'norwegian',
  nl: 'dutch',
  nn: 'norwegian',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sl: 'slovene',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
};

/** The languages with a stemmer, by ISO 639-1 code. */
export const STEMMED_LANGUAGES: readonly string[] = Object.keys(ALGORITHMS);

/** Shorter words are their own stems: stemmers cut them to nothing useful. */
export const MIN_STEM_CHARS = 3;

/**
 * Letters beyond a–z that each language writes (lower case), for telling a
 * word's language from its letters. Languages are tried in this order, so
 * where several write the same letters the more common one wins.
 */
const LETTERS: ReadonlyArray<readonly [string, string]> = [
  ['de', 'äöüß'],
  ['fr', 'àâæçéèêëîïôœùûüÿ'],
  ['es', 'áéíñóúü'],
  ['cs', 'áčďéěíňóřšťúůýž'],
  ['it', 'àèéìíîòóùú'],
  ['pt', 'áâãàçéêíóôõú'],
  ['nl', 'éëïóöü'],
  ['sv', 'åäö'],
  ['da', 'æøå'],
  ['nb', 'æøå'],
  ['fi', 'äöå'],
  ['hu', 'áéíóöőúüű'],
  ['ro', 'ăâîșşțţ'],
  ['tr', 'çğıöşü'],
  ['ca', 'àçèéíïòóúü'],
  ['sl', 'čšž'],
  ['ga', 'áéíóú'],
  ['eu', 'ñ'],
];
const LETTER_SETS = new Map(LETTERS.map(([lang, letters]) => [lang, new Set(letters)]));
const NON_ASCII_LETTER = /[^\p{ASCII}]/u;
const CYRILLIC = /\p{Script=Cyrillic}/u;
const ARABIC = /\p{Script=Arabic}/u;
const ARMENIAN = /\p{Script=Armenian}/u;
const TAMIL = /\p{Script=Tamil}/u;
const DIGIT = /\p{N}/u;

/**
 * The language whose stemmer a word gets: `documentLanguage`, unless the
 * word's letters are foreign to it (see the module comment). `exact` is the
 * word's exact form (lower case, with its accents). Undefined: no stemmer.
 */
export function stemLanguage(exact: string, documentLanguage: string): string | undefined {
  if (!NON_ASCII_LETTER.test(exact)) return ALGORITHMS[documentLanguage] === undefined ? undefined : documentLanguage;
  if (CYRILLIC.test(exact)) return 'ru';
  if (ARABIC.test(exact)) return 'ar';
  if (ARMENIAN.test(exact)) return 'hy';
  if (TAMIL.test(exact)) return 'ta';
  const foreign = [...new Set(exact)].filter((c) => c > '\u007f');
  const writes = (lang: string): boolean => {
    const set = LETTER_SETS.get(lang);
    return set !== undefined && foreign.every((c) => set.has(c));
  };
  if (writes(documentLanguage)) return documentLanguage;
  for (const [lang] of LETTERS) if (writes(lang)) return lang;
  return ALGORITHMS[documentLanguage] === undefined ? undefined : documentLanguage;
}

const stemmers = new Map<string, Stemmer>();

/**
 * Where a stemmer of our choice stands in for snowball-stemmers': Czech's
 * light stemmer (czech-stem.ts); for English the porter2 package, the same
 * Snowball algorithm (the same stems on the 12,513 words of Python's and
 * PostgreSQL's manuals) eight times as fast (0.8 µs a word against 6.6),
 * on lower-case ASCII only, so other words go to Snowball's.
 */
function ownStemmer(lang: string): Stemmer | undefined {
  if (lang === 'cs') return { stem: czechStem };
  if (lang !== 'en') return undefined;
  const snowballEnglish = snowball.newStemmer('english');
  return { stem: (word) => (NON_ASCII_LETTER.test(word) ? snowballEnglish.stem(word) : porter2(word)) };
}

/**
 * The stem of a word (its exact form) under `lang`'s stemmer, plain; the
 * plain form itself where the word is not stemmed. `plain`: the word's
 * plain form, when the caller has it.
 */
export function stemOf(exact: string, lang: string | undefined, plain = plainForm(exact)): string {
  if (lang === undefined || plain.length < MIN_STEM_CHARS || DIGIT.test(plain)) return plain;
  const algorithm = ALGORITHMS[lang];
  if (algorithm === undefined) return plain;
  let stemmer = stemmers.get(lang);
  if (stemmer === undefined) stemmers.set(lang, (stemmer = ownStemmer(lang) ?? snowball.newStemmer(algorithm)));
  const stem = stemmer.stem(exact);
  // A stemmer never empties a word on purpose; keep something to match on. An ASCII stem is plain already.
  return stem === '' ? plain : NON_ASCII_LETTER.test(stem) ? plainForm(stem) : stem;
}

/** Bytes a stem may have: the Lexicon stores its tail in a byte's length. */
const MAX_STEM_BYTES = 255;

/**
 * A word's stem as the index keeps it: its language's number (codes.ts; 0
 * for none) and the stem (the plain form when none). Words with digits
 * have none (numbers, versions, identifiers), nor have those whose stem
 * would be longer than MAX_STEM_BYTES: such words are not language.
 */
export function indexStem(exact: string, plain: string, documentLanguage: string): { language: number; stem: string } {
  const lang = DIGIT.test(plain) ? undefined : stemLanguage(exact, documentLanguage);
  if (lang === undefined) return { language: 0, stem: plain };
  const stem = stemOf(exact, lang, plain);
  if (stem.length > MAX_STEM_BYTES / 3 && Buffer.byteLength(stem, 'utf8') > MAX_STEM_BYTES) return { language: 0, stem: plain };
  return { language: languageCode(lang), stem };
}
