/**
 * The language of a document: detected from its text by eld (the Efficient
 * Language Detector, its small n-gram table: 60 languages; eld-scores.ts
 * gives eld's verdict at a quarter of eld's cost), with the language the page
 * declares (`<html lang>`, Content-Language) as a hint.
 * `docs/decisions.md`, "Language of a document (issue 28)", has the comparison
 * behind the choice and the rule.
 *
 * The rule, in order:
 *   1. the detector is confident (`confident` below) of a language that does not
 *      match the declared one → the detector's language: a page that declares
 *      English through a site-wide template but is written in French is French;
 *   2. a usable declared language (`languageOfTag`) → the declared one, also when
 *      the detector has too little text or is unsure, and when it names a close
 *      relative it cannot tell apart (eld has no Indonesian and says Malay:
 *      `MATCHES`);
 *   3. no declared language: the detector's best language when it is at least
 *      plausible (confident, or a close call between two languages: right 19
 *      times in 20 on the corpus), with `confident` saying which;
 *   4. 'und': no usable declared language and no plausible detection (too
 *      little text, digits, symbols, binary).
 *
 * "Plausible" is eld's `isReliable()`: at least 3 n-grams and the best score
 * at least 0.75 of that language's average. "Confident" is what `isReliable()`
 * means to say besides: the best score at least 0.01 above the second. (eld
 * 2.1.0 compares the best score with the second one's language number instead,
 * so that part of its check passes almost always; the margin is taken here from
 * `getScores()`.)
 *
 * Where it reads: eld stops at about 350 bytes of words, so one call reads a
 * page's first lines, which are often not its language (a site's English menu
 * above a Czech text, an epigraph, a licence header). A text longer than two
 * such readings is read in WINDOWS windows, from its start, middle and end
 * (or samples the caller took there: TextBuilder keeps them while it writes),
 * and the windows vote (`vote`): the language most of them find plausible,
 * confident when one of them is; a tie goes to the first tied window.
 *
 * Bounded work: at most WINDOWS windows of MAX_CHARS characters are ever
 * copied or looked at, whatever the text's size. Never throws on any string.
 *
 * Loading the table costs about 1 s and 55 MB of heap, once per thread, at the
 * first import of this module.
 */

import { languageOfTag, UNDETERMINED } from './codes.js';
import { eldVerdict } from './eld-scores.js';

/** How much of a text one window is: what eld reads of it (350 bytes of words) with room for what its clean-up drops; past about 700 characters eld costs three times as much (its clean-up), for nothing it reads. */
export const MAX_CHARS = 600;
/** Windows read of a long text: its start, middle and end. */
export const WINDOWS = 3;
/** About what eld reads of a window before it stops (350 bytes of words). */
const READ_CHARS = 350;

export interface LanguageHints {
  /** The language the page declares: `<html lang>`, or else Content-Language; any tag, junk is ignored. */
  readonly declared?: string | undefined;
}

export interface DetectedLanguage {
  /** An ISO 639-1 code from `codes.ts`, or 'und'. */
  readonly lang: string;
  /**
   * Whether the detector was confident of `lang` or of a language it cannot tell
   * apart from it (false when `lang` comes from the hint alone, or is 'und').
   */
  readonly confident: boolean;
}

/** Languages the detector names for a declared language it cannot tell apart from it: declared → detected. */
const MATCHES: ReadonlyMap<string, readonly string[]> = new Map([
  ['id', ['ms']],
  ['nb', ['no']],
  ['nn', ['no']],
  ['bs', ['hr', 'sr']],
]);

function matches(declared: string, detected: string): boolean {
  return declared === detected || (MATCHES.get(declared)?.includes(detected) ?? false);
}

/** How far the best score must be above the second for a confident answer. */
const MIN_MARGIN = 0.01;

interface Found {
  /** The detector's best language, '' when it names none. */
  readonly lang: string;
  /** eld's isReliable(): enough n-grams, a score not far below the language's average. */
  readonly plausible: boolean;
  /** Plausible and MIN_MARGIN above the runner-up. */
  readonly confident: boolean;
}

const NOTHING: Found = { lang: '', plausible: false, confident: false };

function detect(text: string): Found {
  const { lang, reliable, best, second } = eldVerdict(text);
  if (lang === '' || languageOfTag(lang) !== lang) return NOTHING;
  if (!reliable) return { lang, plausible: false, confident: false };
  return { lang, plausible: true, confident: second === -Infinity || best - second >= MIN_MARGIN };
}

/** At most MAX_CHARS characters of `text` from about `start`, not cutting a surrogate pair in two at either end. */
function window(text: string, start: number): string {
  const isLow = (i: number) => {
    const c = text.charCodeAt(i);
    return c >= 0xdc00 && c <= 0xdfff;
  };
  let from = Math.max(0, Math.min(start, text.length));
  if (from > 0 && from < text.length && isLow(from)) from += 1;
  let to = Math.min(text.length, from + MAX_CHARS);
  if (to < text.length && isLow(to)) to -= 1;
  return from === 0 && to === text.length ? text : text.slice(from, to);
}

/** The windows the detector reads of one text: the whole of a short one; from the start, middle and end of a longer one. */
export function windowsOf(text: string): string[] {
  if (text.length <= 2 * READ_CHARS) return [window(text, 0)];
  const last = text.length - READ_CHARS;
  return Array.from({ length: WINDOWS }, (_, i) => window(text, Math.round((i * last) / (WINDOWS - 1))));
}

/** Each window's answer, but the last's when the first two agree (it could not change the majority). */
function readWindows(windows: readonly string[]): Found[] {
  const found = windows.slice(0, 2).map(detect);
  const [a, b] = found;
  if (windows.length > 2 && !(a!.plausible && b!.plausible && a!.lang === b!.lang)) found.push(detect(windows[2]!));
  return found;
}

/**
 * The windows' verdict: the language most of them find plausible, confident
 * when one of them is confident of it; on a tie, the first of the tied
 * windows' own answer (as a single window would have it).
 */
function vote(found: readonly Found[]): Found {
  const votes = new Map<string, { n: number; confident: boolean }>();
  for (const f of found) {
    if (!f.plausible) continue;
    const v = votes.get(f.lang) ?? { n: 0, confident: false };
    votes.set(f.lang, { n: v.n + 1, confident: v.confident || f.confident });
  }
  const most = Math.max(0, ...[...votes.values()].map((v) => v.n));
  const leaders = [...votes].filter(([, v]) => v.n === most);
  if (leaders.length === 1) return { lang: leaders[0]![0], plausible: true, confident: leaders[0]![1].confident };
  return found.find((f) => (leaders.length === 0 ? f.lang !== '' : f.plausible && votes.get(f.lang)!.n === most)) ?? NOTHING;
}

/**
 * The language of a document's text, with the page's declared language as a
 * hint (the rule above). `text` is the text, or samples of it taken at its
 * start, middle and end (each read as one window; the first may carry the title).
 */
export function detectLanguage(text: string | readonly string[], hints: LanguageHints = {}): DetectedLanguage {
  const declared = languageOfTag(hints.declared);
  const samples = typeof text === 'string' ? [text] : Array.isArray(text) ? text.slice(0, WINDOWS).map(String) : [];
  // One sample is the whole text (windowed here); several are the caller's windows.
  const windows = (samples.length === 1 ? windowsOf(samples[0]!) : samples.map((t) => window(t, 0))).filter((t) => t !== '');
  const found = windows.length === 0 ? NOTHING : vote(readWindows(windows));
  if (found.confident && (declared === undefined || !matches(declared, found.lang))) return { lang: found.lang, confident: true };
  if (declared !== undefined) return { lang: declared, confident: found.confident };
  if (found.plausible) return { lang: found.lang, confident: false };
  return { lang: UNDETERMINED, confident: false };
}
