/**
 * The bare indexer, a floor rather than an engine (as the bare undici loop is
 * for gathering): the least a positional inverted index written in
 * JavaScript does with the extracted text the other engines get, in one
 * thread, so that the build-time targets of issue 6 can be read against
 * what this language costs here.
 *
 *   node dist/bench/peers/bare-indexer.js TEXT.tsv OUT
 *
 * Per page, title then body: sherlock's own word cutter (common/words.ts
 * cutWords), each spelling looked up in the chewer's table on the hash the
 * cutter makes (indexer/spellings.ts; a spelling's plain form is made once,
 * as FTS5 folds case and accents), and per word a growing buffer of
 * varints: the page's number as a gap, its positions as gaps, a zero. Then
 * the words in sorted order, each with its list's length, and the lists
 * back to back, to OUT.
 * Nothing else: no word types, fields, cards, duplicates or links, so any
 * real indexer in this language costs more. Prints {"docs":N}.
 */

import { writeFileSync } from 'node:fs';
import { cutWords, exactForm, plainForm, type RawKind } from '../../common/words.js';
import { ABSENT, Spellings } from '../../indexer/spellings.js';
import { readTextFile } from '../extract.js';

/** One word's postings: per page, the gap from the page before, its positions as gaps (each ≥ 1), then a zero. */
class Postings {
  bytes = new Uint8Array(16);
  length = 0;
  private page = -1;
  private last = -1;

  private varint(value: number): void {
    if (this.length + 10 > this.bytes.length) {
      const grown = new Uint8Array(2 * this.bytes.length);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    while (value >= 0x80) {
      this.bytes[this.length++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.bytes[this.length++] = value;
  }

  add(page: number, position: number): void {
    if (page !== this.page) {
      this.finish();
      this.varint(page - Math.max(this.page, 0));
      this.page = page;
      this.last = -1;
    }
    this.varint(position - this.last);
    this.last = position;
  }

  /** Ends the current page's positions. */
  finish(): void {
    if (this.last >= 0) this.varint(0);
    this.last = -1;
  }
}

function build(textFile: string, outFile: string): number {
  const spellings = new Spellings();
  const wordOf = new Map<string, number>();
  const words: string[] = [];
  const postings: Postings[] = [];
  let text = '';
  let page = 0;
  let base = 0;
  const visit = (start: number, end: number, kind: RawKind, position: number, hash: number): void => {
    if (kind === 'garbage') return;
    let word = spellings.find(text, start, end, hash);
    if (word === ABSENT) {
      const plain = plainForm(exactForm(text.slice(start, end)));
      const known = wordOf.get(plain);
      word = known ?? words.length;
      if (known === undefined) {
        wordOf.set(plain, word);
        words.push(plain);
        postings.push(new Postings());
      }
      spellings.insert(text.slice(start, end), word);
    }
    postings[word]!.add(page, base + position);
  };
  let docs = 0;
  for (const doc of readTextFile(textFile)) {
    page = docs++;
    text = doc.title;
    base = 0;
    // A gap of one between title and body, so that no phrase spans them.
    base = cutWords(text, visit) + 1;
    text = doc.text;
    cutWords(text, visit);
  }
  const order = words.map((_, i) => i).sort((a, b) => (words[a]! < words[b]! ? -1 : 1));
  // The lexicon (word, bytes of its list) in one piece, then the lists back to back.
  const lists: Uint8Array[] = [];
  const lexicon = order
    .map((word) => {
      const list = postings[word]!;
      list.finish();
      lists.push(list.bytes.subarray(0, list.length));
      return `${words[word]}\t${list.length}\n`;
    })
    .join('');
  writeFileSync(outFile, Buffer.concat([Buffer.from(lexicon + '\n', 'utf8'), ...lists]));
  return docs;
}

const [textFile, outFile] = process.argv.slice(2);
if (textFile === undefined || outFile === undefined) {
  process.stderr.write('usage: bare-indexer TEXT.tsv OUT\n');
  process.exit(2);
}
process.stdout.write(JSON.stringify({ docs: build(textFile, outFile) }) + '\n');
