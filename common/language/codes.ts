/**
 * The languages the index names, by ISO 639-1 code, each with a one-byte
 * number: what CardInfo and the Lexicon store. The numbers are a file
 * format: a language is only ever appended, never moved or removed. 0 is
 * "und", undetermined.
 */

export const LANGUAGES = [
  'und',
  'en', 'cs', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'sv', 'da',
  'nb', 'nn', 'no', 'fi', 'hu', 'ro', 'ru', 'tr', 'ca', 'eu',
  'ga', 'hy', 'ar', 'ta', 'sl', 'sk', 'pl', 'uk', 'bg', 'hr',
  'sr', 'bs', 'el', 'he', 'ja', 'zh', 'ko', 'vi', 'id', 'ms',
  'hi', 'bn', 'fa', 'ur', 'th', 'lt', 'lv', 'et', 'is', 'gl',
  'af', 'sq', 'be', 'ka', 'kk', 'mk', 'mn', 'sw', 'tl', 'cy',
  'la', 'eo', 'lb', 'mt', 'az', 'uz', 'ky', 'tg', 'am', 'ne',
  'mr', 'gu', 'pa', 'te', 'kn', 'ml', 'si', 'my', 'km', 'lo',
] as const;

export type Language = (typeof LANGUAGES)[number];

const NUMBERS = new Map<string, number>(LANGUAGES.map((lang, n) => [lang, n]));

/** The number of an ISO 639-1 code; 0 (und) for one we do not name. */
export function languageCode(lang: string): number {
  return NUMBERS.get(lang) ?? 0;
}

/** The ISO 639-1 code of a number; "und" for 0 or a number no language has (a newer index). */
export function languageOf(code: number): Language {
  return LANGUAGES[code] ?? 'und';
}

/** Whether `lang` is a code we name (not "und"). */
export function isLanguage(lang: string): lang is Language {
  return NUMBERS.has(lang) && lang !== 'und';
}

/** The language a BCP 47 tag or locale names ("en-US", "cs_CZ", "DE"): its primary subtag when we name it, else "und". */
export function languageOfTag(tag: string): Language {
  const primary = /^\s*([a-zA-Z]{2,3})(?:[-_][\w-]*)?\s*$/.exec(tag)?.[1]?.toLowerCase();
  return primary !== undefined && NUMBERS.has(primary) ? (primary as Language) : 'und';
}
