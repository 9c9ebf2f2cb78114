/**
 * The languages sherlock names: every ISO 639-1 code, each with a one-byte
 * number for the index (CardInfo's language column).
 *
 * Format (a stored number, so it never changes meaning):
 *   0        und — no language known
 *   1–184    the ISO 639-1 codes in the alphabetical order they had when this
 *            table was made (iso-codes 4.15, ISO 639-2's alpha-2 column), 'bh'
 *            (withdrawn from ISO 639-1 but still in pages) included
 *   185–255  free: a code ISO adds later is appended, never inserted
 * A number read from disk that is not in the table reads as 'und'.
 *
 * Only `common/language/` decides what a language is: the gatherer names a
 * document's language with `detect.ts`, the indexer stores `languageCode()`,
 * the searcher turns it back with `languageOf()`.
 */

export const UNDETERMINED = 'und';

/** Index = the stored number. Append only. */
const CODES: readonly string[] = [
  UNDETERMINED, // 0
  'aa', 'ab', 'ae', 'af', 'ak', 'am', 'an', 'ar', 'as', 'av', 'ay', 'az', 'ba', 'be', 'bg', 'bh', // 1–16
  'bi', 'bm', 'bn', 'bo', 'br', 'bs', 'ca', 'ce', 'ch', 'co', 'cr', 'cs', 'cu', 'cv', 'cy', 'da', // 17–32
  'de', 'dv', 'dz', 'ee', 'el', 'en', 'eo', 'es', 'et', 'eu', 'fa', 'ff', 'fi', 'fj', 'fo', 'fr', // 33–48
  'fy', 'ga', 'gd', 'gl', 'gn', 'gu', 'gv', 'ha', 'he', 'hi', 'ho', 'hr', 'ht', 'hu', 'hy', 'hz', // 49–64
  'ia', 'id', 'ie', 'ig', 'ii', 'ik', 'io', 'is', 'it', 'iu', 'ja', 'jv', 'ka', 'kg', 'ki', 'kj', // 65–80
  'kk', 'kl', 'km', 'kn', 'ko', 'kr', 'ks', 'ku', 'kv', 'kw', 'ky', 'la', 'lb', 'lg', 'li', 'ln', // 81–96
  'lo', 'lt', 'lu', 'lv', 'mg', 'mh', 'mi', 'mk', 'ml', 'mn', 'mr', 'ms', 'mt', 'my', 'na', 'nb', // 97–112
  'nd', 'ne', 'ng', 'nl', 'nn', 'no', 'nr', 'nv', 'ny', 'oc', 'oj', 'om', 'or', 'os', 'pa', 'pi', // 113–128
  'pl', 'ps', 'pt', 'qu', 'rm', 'rn', 'ro', 'ru', 'rw', 'sa', 'sc', 'sd', 'se', 'sg', 'si', 'sk', // 129–144
  'sl', 'sm', 'sn', 'so', 'sq', 'sr', 'ss', 'st', 'su', 'sv', 'sw', 'ta', 'te', 'tg', 'th', 'ti', // 145–160
  'tk', 'tl', 'tn', 'to', 'tr', 'ts', 'tt', 'tw', 'ty', 'ug', 'uk', 'ur', 'uz', 've', 'vi', 'vo', // 161–176
  'wa', 'wo', 'xh', 'yi', 'yo', 'za', 'zh', 'zu', // 177–184
];

const NUMBERS: ReadonlyMap<string, number> = new Map(CODES.map((code, i) => [code, i]));

/** How many numbers are taken (und included). */
export const LANGUAGE_COUNT = CODES.length;

/** Whether `lang` is one of the ISO 639-1 codes we name (lower case; 'und' is not). */
export function isLanguage(lang: string): boolean {
  const n = NUMBERS.get(lang);
  return n !== undefined && n !== 0;
}

/** The stored number of an ISO 639-1 code; 0 for 'und' and anything not in the table. */
export function languageCode(lang: string): number {
  return NUMBERS.get(lang) ?? 0;
}

/** The ISO 639-1 code of a stored number; 'und' for 0 and any number not in the table. */
export function languageOf(code: number): string {
  return (Number.isInteger(code) ? CODES[code] : undefined) ?? UNDETERMINED;
}

/** Tags of ISO 639-1 that were withdrawn or renamed, as pages still write them. */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ['iw', 'he'],
  ['in', 'id'],
  ['ji', 'yi'],
  ['jw', 'jv'],
  ['mo', 'ro'],
]);

/**
 * The language of a declared tag (`<html lang>`, Content-Language, an
 * `hreflang`): its primary subtag (RFC 5646 section 2.2.1) in lower case,
 * `_` taken as `-` ("en-US" → "en", "cs_CZ" → "cs", " DE " → "de"). The first
 * of a comma-separated list counts (Content-Language may name several). Withdrawn
 * codes map to their successors ("iw" → "he"). Undefined for anything else:
 * empty, "und", "mul", "x-default", three-letter subtags, junk.
 */
export function languageOfTag(tag: string | undefined): string | undefined {
  if (tag === undefined) return undefined;
  const first = tag.slice(0, 64).split(',')[0]!.trim().toLowerCase();
  const primary = /^([a-z]{2})(?:$|[-_])/.exec(first)?.[1];
  if (primary === undefined) return undefined;
  const lang = ALIASES.get(primary) ?? primary;
  return isLanguage(lang) ? lang : undefined;
}
