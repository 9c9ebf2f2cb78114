/**
 * A state whose pages are random words (as hashes, base64 blobs, log files
 * and machine-made pages are): nearly every word is met once in the whole
 * collection, so the vocabulary grows with the text instead of levelling
 * off, which is what a build's memory must survive. The buckets are
 * written straight into the state's bucket file with sherlock's own
 * writer (BucketWriter, documentBody), no crawl: page i is
 * `http://random.example/page-<i>` with `words` words of 6 to 12 base-36
 * characters from a seeded generator, so the same arguments give the same
 * bytes. `wordOf(seed, i, k)` names word k of page i, for a test that
 * searches for it.
 */

import { mulberry32 } from '../../bench/queries.js';
import { BUCKET_TYPE, BucketObject, encodeBucket } from '../../common/bucket/bucket.js';
import { BucketWriter, bucketFilePath } from '../../common/bucket/file.js';
import { documentBody, noRobots } from '../../common/bucket/doc-body.js';
import { TextBuilder } from '../../common/bucket/doc-text.js';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Words per paragraph: the text gets a block break now and then, as a page does. */
const PARAGRAPH = 200;

/** A 32-bit generator (bench's mulberry32), seeded per page so a word can be named without making the rest. */
function generator(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() * 2 ** 32;
}

/** The words of page `page`. */
export function pageWords(seed: number, page: number, words: number): string[] {
  const next = generator(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ page);
  const out = new Array<string>(words);
  for (let k = 0; k < words; k++) {
    const length = 6 + (next() % 7);
    let word = '';
    for (let c = 0; c < length; c++) word += ALPHABET[next() % ALPHABET.length];
    out[k] = word;
  }
  return out;
}

export function pageUrl(page: number): string {
  return `http://random.example/page-${page}`;
}

export interface RandomWordsState {
  pages: number;
  /** Bytes of text written (words and their spaces). */
  textBytes: number;
}

/** Writes `pages` pages of `words` random words each into `state`'s bucket file. */
export function writeRandomWordsState(state: string, options: { pages: number; words: number; seed?: number }): RandomWordsState {
  const seed = options.seed ?? 26;
  const writer = BucketWriter.open(bucketFilePath(state));
  let textBytes = 0;
  try {
    for (let page = 0; page < options.pages; page++) {
      const words = pageWords(seed, page, options.words);
      const text = new TextBuilder(4 * 1024 * 1024);
      for (let k = 0; k < words.length; k += PARAGRAPH) {
        if (k > 0) text.breakBlock();
        text.append(words.slice(k, k + PARAGRAPH).join(' '));
      }
      const finished = text.finish();
      textBytes += finished.length;
      const header = new BucketObject();
      for (const [name, value] of [['U', pageUrl(page)], ['D', String(1_700_000_000 + page)], ['H', '200'], ['T', 'text/html']] as const) header.add(name, value);
      const body = documentBody({ title: `Random ${words[0]}`, text: finished, metas: [], links: [], robots: noRobots() });
      writer.append(BUCKET_TYPE.V33_DEFLATE, encodeBucket(BUCKET_TYPE.V33_DEFLATE, { header, body }));
    }
    writer.sync();
  } finally {
    writer.close();
  }
  return { pages: options.pages, textBytes };
}
