/**
 * How far two extractions of a PDF's text agree, by words: the bench's PDF
 * part holds sherlock's text against pdftotext's, and so does a test. Words
 * are runs of letters, marks and digits after NFC and lower-casing; Chinese,
 * Japanese and Korean runs are split into characters, since pdftotext
 * writes them without spaces and where one word ends is a guess. Agreement
 * is the share of the reference's words (with their counts) the other text
 * has too.
 */

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]/u;

export function words(text: string): string[] {
  const out: string[] = [];
  for (const [word] of text.normalize('NFC').toLowerCase().matchAll(WORD)) {
    if (!CJK.test(word)) out.push(word);
    else for (const char of word) out.push(char);
  }
  return out;
}

function tally(list: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of list) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

/** The share of `reference`'s words that `candidate` has, each as often at most; and the reference's word count. */
export function wordAgreement(reference: string, candidate: string): { agreement: number; words: number } {
  const want = tally(words(reference));
  const have = tally(words(candidate));
  let shared = 0;
  let total = 0;
  for (const [word, n] of want) {
    total += n;
    shared += Math.min(n, have.get(word) ?? 0);
  }
  return { agreement: total === 0 ? 1 : shared / total, words: total };
}
