/**
 * Stage 2, chew, the worker side (a piscina worker of chew.ts): turns a batch
 * of cards into what the later stages need, in flat buffers that are
 * transferred, not cloned, to the main thread. The worker opens the bucket
 * file read-only itself and gets only oids, so bucket bytes never cross
 * threads.
 *
 * Per card, one pass over its text:
 *   - words (common/words.ts, the query parser's rule) of the title, the
 *     metas, the URL (meta type urlword) and the text with its word types;
 *     meta positions count over all metas with a gap of one between two
 *     metas, word positions over the text with a gap of one at each block
 *     break, so phrases never join across either; per card the limits of
 *     common/index/refs.ts: words past MAX_WORD_POSITION keep one edge ref, metas
 *     past MAX_META_POSITION are dropped; a word of more than 255 bytes in
 *     UTF-8 (the Lexicon's limit) is garbage, like one of too many characters;
 *   - one reference chain per distinct word (exact form), encoded as it goes
 *     in the form alone (common/index/refs.ts: a u32 head with the card id), which
 *     the WordIndex stage lists;
 *   - the card for Cards, deflated here in blocks of the batch's cards;
 *   - the MD5 of its words (Checksums), their min-hash signature
 *     (signatures.ts), its links (Links records) and the anchor text of
 *     each link bracket (RefTexts records);
 *   - the StringIndex keys of its URL, host and domain.
 * An empty card (a redirect, or a page whose robots meta says noindex) gets
 * its card and links but no words. A bucket that does not decode becomes an
 * empty card and a problem the main thread logs.
 *
 * Images (sherlock-original §2: image references `I`): a page's `<img>` with
 * an alt text gives an image reference (ImageRefs records); after the
 * buckets' cards, chew.ts hands the workers batches of image cards made from
 * them, each chewed as a document whose title is its first alt text and
 * whose text is all of them, one block each, in its page's language. An
 * image card is never a duplicate of another (no checksum, no signature):
 * two images with the same alt text are two images.
 *
 * Words are numbered per worker: each result lists the words the worker
 * met for the first time (since it last forgot them: `epoch`), postings name
 * words by that number, and the main thread keeps one table per worker
 * from those numbers to its vocabulary. So a word crosses threads as a
 * string once per worker, not once per batch. The forms (exact, plain) of
 * each spelling are made once per worker too, and the text is cut without
 * making a string per word (words.ts cutWords, a hash table of spellings
 * over the text's characters): cutting is most of the cost of chewing.
 *
 * Memory. The spellings a worker keeps are bounded by its share of
 * indexer.memory_budget (`maxSpellings`, SPELLING_BYTES each): a worker
 * that passes it forgets every spelling after the card it is on (its result
 * then has a segment of words per epoch), whatever
 * the text: random words (hashes, base64, logs) never repeat, and a table
 * kept for them would grow with the text.
 */

import { createHash } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { parseArcAttribute, type ArcPlace } from '../common/archive/arc-place.js';
import { decodeBucketHeader, MAX_BODY_LENGTH, type BucketObject } from '../common/bucket/bucket.js';
import { BUCKET_HEADER_SIZE, BucketReader } from '../common/bucket/file.js';
import { META_TYPES, noRobots, parseBody, type DocumentBody } from '../common/bucket/doc-body.js';
import { linkBlocks, readDocText, TextBuilder, type DocTextToken } from '../common/bucket/doc-text.js';
import { isSherlockError, SherlockError } from '../common/errors.js';
import { CARD_FLAG, CARD_TYPES, cardType, IMAGE_TYPES, lengthCode } from '../common/index/cardinfo.js';
import { CardBlocks } from '../common/index/cards.js';
import { STRING_KINDS, stringKey, urlStrings } from '../common/index/chains.js';
import { LINK_TYPES } from '../common/index/fingerprints.js';
import { MAX_WORD_BYTES } from '../common/index/lexicon.js';
import { ChainBuilder, MAX_META_POSITION, MAX_WORD_POSITION, WORD_EDGE } from '../common/index/refs.js';
import { fingerprint, footprint, siteFootprint, urlParts } from '../common/url.js';
import { languageCode, languageOf, languageOfTag } from '../common/language/codes.js';
import { indexStem } from '../common/language/stem.js';
import { cutWords, exactForm, plainForm, spellingHash, type RawKind } from '../common/words.js';
import { grow } from '../common/grow.js';
import { Shingler, type SignatureSettings } from './signatures.js';
import { ABSENT, Spellings } from './spellings.js';
import { FINGERPRINT_SIZE, MAX_REFTEXT_BYTES, POSTING_HEAD, REFTEXT_HEAD } from './work-files.js';

/** A card made from the alt texts pages give an image (chew.ts), not from a bucket. */
export interface ImageCard {
  url: string;
  /** Its distinct alt texts, in the order met: the first is its title. */
  texts: string[];
  /** The page of its first alt text. */
  referrer: string;
  /** The latest date of the pages showing it, Unix seconds. */
  date: number;
  /** The language number of its first page (common/language/codes.ts). */
  language: number;
}

export interface ChewTask {
  /** The bucket file, and the generation the oids belong to (a shake in between is an error). */
  buckets: string;
  generation: number;
  /** Card id of the first oid (or image); the others follow. */
  first: number;
  oids: Uint32Array;
  /** Scan flags per card (CARD_FLAG.empty for redirects). */
  flags: Uint8Array;
  /** A batch of image cards instead of buckets (oids and flags empty). */
  images?: ImageCard[];
  signatures: SignatureSettings;
  /**
   * Spellings the worker may keep (its share of indexer.memory_budget): past
   * it, the worker forgets them after the card it is on (a new segment of
   * the result).
   */
  maxSpellings: number;
}

/**
 * Per card, SUMMARY_SIZE bytes:
 *   0  4  date (Last-Modified, else download time)   8  1  CARD_FLAG bits
 *   4  4  site (first 4 bytes of the site footprint)  9  1  type (CARD_TYPES index)
 *   10 2  length of the URL (UTF-16 units)            12 1  1: never merged (an image card), else 0
 *   13 3  zero
 *   16 16 MD5 of its words (zero when empty)          32 16 footprint of the URL (url.ts)
 *   48 2  the first meta position after its metas     50 1  lengthCode of its body's words
 *   51 1  language number (common/language/codes.ts)
 */
export const SUMMARY_SIZE = 52;
/**
 * A card's language: what the gatherer decided from its text (`g`), or, for
 * a bucket stored before it did, the language the page declared. The
 * indexer detects nothing itself: the detector's tables take 150 MB of
 * each thread that loads them, and documents are told where they are
 * parsed (a refetch gives an old page its `g`).
 */
function cardLanguage(doc: DocumentBody): string {
  return languageOfTag(doc.detectedLanguage ?? doc.language) ?? 'und';
}

/**
 * A title's meta weight (0–3) by its length in words: a word is more what a
 * short title is about than what a long one mentions, as BM25F normalises a
 * title field by its length (rank.ts TITLE_WEIGHTS). Numbers are not
 * counted: a manual's section numbers ("20.11. Client Connection
 * Defaults", "Chapter 28.") say where a page is, not what it is about.
 */
export function titleWeight(title: string): 0 | 1 | 2 | 3 {
  let n = 0;
  cutWords(title, (_start, _end, kind) => {
    if (kind !== 'number') n += 1;
  });
  return n <= 2 ? 3 : n <= 4 ? 2 : n <= 8 ? 1 : 0;
}

/** Per card: the StringIndex keys of its URL, host and domain (zero when empty). */
export const STRING_KEYS_SIZE = STRING_KINDS.length * FINGERPRINT_SIZE;
/** Bytes of a Links record (common/index/fingerprints.ts). */
export const LINK_RECORD = 16;
/**
 * An image reference's head: 0 12 fingerprint of the image URL, 12 4 date of
 * the page, 16 1 its language number, 17 2 bytes of the image URL, 19 2 of
 * the alt text, 21 2 of the page's URL; then the three, UTF-8.
 */
export const IMAGE_REF_HEAD = 23;
const IMAGE = CARD_TYPES.indexOf('image');
const NEVER_MERGED = 1;

/** The MIME type of an image card by its URL's extension; an image of another name is `application/octet-stream` of type image. */
function imageType(url: string): string {
  const path = urlParts(url).rest.replace(/[?#].*$/s, '');
  const dot = path.lastIndexOf('.');
  return (dot > path.lastIndexOf('/') ? IMAGE_TYPES.get(path.slice(dot + 1).toLowerCase()) : undefined) ?? 'application/octet-stream';
}

/**
 * The words of a stretch of a batch's cards, named by the worker's numbers of
 * one epoch. A batch has one, or more when the worker's spellings filled its
 * share and it forgot them between two cards.
 */
export interface WordSegment {
  /** The worker's vocabulary epoch: word numbers are the worker's, until its epoch changes. */
  epoch: number;
  /** Number of the first word in `words`; the others follow. */
  firstWord: number;
  /** Words the worker met for the first time, exact forms, each followed by '\n' (words hold no control characters). */
  words: string;
  /** Their plain forms, each followed by '\n', empty where the same as the exact form. */
  plains: string;
  /** Their stems, each followed by '\n': "<language number> <stem>", empty for none (common/language/stem.ts indexStem). */
  stems: string;
  /** Pairs: a word used in this stretch, its occurrences in it. */
  usage: Uint32Array;
  /** Postings records (work-files.ts) naming the worker's words. */
  postings: Uint8Array;
}

export interface ChewResult {
  summaries: Uint8Array;
  /** The batch's cards in blocks (common/index/cards.ts CardBlocks), back to back. */
  cards: Uint8Array;
  strings: Uint8Array;
  /** The worker thread, whose word numbers the segments use. */
  thread: number;
  /** The words and postings of the batch's cards, in card order. */
  segments: WordSegment[];
  links: Uint8Array;
  /** RefTexts records (work-files.ts). */
  refTexts: Uint8Array;
  /** Image references (IMAGE_REF_HEAD, then the image's URL, its alt text and the page's URL). */
  imageRefs: Uint8Array;
  /** Per card its min-hashes (signatures.ts), u32 each; zero for an empty card. */
  signatures: Uint8Array;
  /** "oid N: message" for buckets that became empty cards because they do not decode. */
  problems: string[];
}

/** A byte buffer that grows; take() hands out an exact copy with its own ArrayBuffer (transferable). */
class Bytes {
  data = Buffer.allocUnsafeSlow(1 << 16);
  length = 0;

  /** Makes room for `n` more bytes; returns where they go. */
  reserve(n: number): number {
    if (this.length + n > this.data.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.data.length, this.length + n));
      this.data.copy(grown, 0, 0, this.length);
      this.data = grown;
    }
    return this.length;
  }

  append(bytes: Uint8Array): void {
    const at = this.reserve(bytes.length);
    this.data.set(bytes, at);
    this.length += bytes.length;
  }

  take(): Uint8Array {
    const out = new Uint8Array(this.length);
    out.set(this.data.subarray(0, this.length));
    this.length = 0;
    return out;
  }
}

// The fields of Chewer.perWord.
const W_BATCH_STAMP = 0;
const W_BATCH_OF = 1;
const W_CARD_STAMP = 2;
const W_SLOT_OF = 3;
const W_HASH = 4;
const W_UTF8_AT = 5;
const W_UTF8_LENGTH = 6;
const W_ACCENTED = 7;
const WORD_FIELDS = 8;

/**
 * What a spelling the worker knows costs it, about: the table's slots and
 * key, the spelling and its exact form as strings, the map from exact form
 * to word, the word's fields, its UTF-8 bytes and its stem line (measured: 802 pages of
 * random words of 6–12 letters). chew.ts divides the workers' share of the
 * memory budget by it.
 */
export const SPELLING_BYTES = 360;
const GARBAGE = -1;
/** Link URLs whose fingerprints the worker keeps (target()). */
const MAX_TARGETS = 1 << 16;
const META_BIT = 1 << 22;
const META_TYPE = Object.fromEntries(META_TYPES.map((name, i) => [name, i])) as Record<(typeof META_TYPES)[number], number>;
const LINK_TYPE_NUMBER = new Map(LINK_TYPES.map((type, i) => [type, i]));
const NO_TEXT = Buffer.alloc(0);
/** The ARC place of a card without a record (an image card). */
const NO_RECORD: ArcPlace = { file: '-', offset: 0, length: 0 };

function whole(value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,10}$/.test(value) && Number(value) <= 0xffffffff ? Number(value) : undefined;
}

/**
 * A copy of a spelling that holds its own characters: V8 makes a slice of 13
 * characters or more a view of the text it was cut from, and the worker keeps
 * spellings long after the text (a page of long hashes would keep every
 * page's text alive).
 */
function flat(spelling: string): string {
  return spelling.length < 13 ? spelling : Buffer.from(spelling, 'utf16le').toString('utf16le');
}

/** The `a` attribute; a bucket without one (never written so by the gatherer) gets a place that names nothing. */
function arcPlace(value: string | undefined): ArcPlace {
  return parseArcAttribute(value) ?? NO_RECORD;
}

/** The words of a URL worth finding it by: host and decoded path and query. */
function urlText(url: string): string {
  const { host, rest } = urlParts(url);
  try {
    return `${host} ${decodeURIComponent(rest)}`;
  } catch {
    return `${host} ${rest}`;
  }
}

/** One worker's memory of spellings and the state of the batch and card it chews. */
class Chewer {
  // Spellings → worker word (GARBAGE when too long); exact form → worker word.
  private readonly spellings = new Spellings();
  private readonly exacts = new Map<string, number>();
  private exact: string[] = [];
  private plain: string[] = [];
  /** Each word's line of WordSegment.stems. */
  private stem: string[] = [];
  /** The language of the card being cut: its words are stemmed in it (unless their letters say otherwise). */
  private cardLanguage = 'und';
  /** The language the card's words are stemmed in: its own, or for a card of none the one most cards this worker cut had. */
  private stemLanguage = 'und';
  /** Cards cut by language number, for stemLanguage. */
  private readonly languages = new Uint32Array(256);
  private shingler: Shingler | undefined;
  /** Whether the words being read go into the near-duplicate signature (not those of a link block). */
  private shingling = true;
  /** The meta position after the card's metas, where the link stage puts anchor texts. */
  private metaEnd = 0;
  /** Words of the card's body (its text, not its metas), for CardInfo's length. */
  private bodyWords = 0;
  /** Words reported to the main thread so far, and the epoch they belong to. */
  private reported = 0;
  private epoch = 0;
  /**
   * Per worker word w, WORD_FIELDS int32 at w * WORD_FIELDS (W_… offsets):
   * the batch and card it was last seen in and its number there, the
   * words.ts spellingHash of its exact form, where that form lies in `utf8`
   * and its length, whether it has accents. One array, so that an occurrence
   * touches one cache line for all of them.
   */
  private perWord = new Int32Array(1024 * WORD_FIELDS);
  private batchSerial = 0;
  private cardSerial = 0;
  // The batch's words (worker word numbers) and their occurrences.
  private batchWords: number[] = [];
  private occurrencesOf = new Uint32Array(1024);
  // The card's distinct words (slots) and occurrences.
  private slots = 0;
  private slotWord = new Int32Array(256);
  private slotCount = new Uint32Array(256);
  private slotEdge = new Uint8Array(256);
  private slotStart = new Uint32Array(257);
  private occurrences = 0;
  private occSlot = new Uint32Array(4096);
  private occInfo = new Uint32Array(4096);
  private order = new Uint32Array(4096);
  /** The exact forms of the worker words in UTF-8 (the checksum hashes bytes, not a joined string). */
  private utf8 = Buffer.allocUnsafeSlow(1 << 20);
  private utf8Used = 0;
  /** The card's checksum words so far, each followed by a space. */
  private readonly checksum = new Bytes();
  private readonly builder = new ChainBuilder();
  private readonly targets = new Map<string, Buffer | undefined>();
  // What the visitors of cutWords need: the text being cut, and the bits or base of its occurrences.
  private text = '';
  private textBits = 0;
  private textBase = 0;
  private metaBase = 0;
  private metaBits = 0;
  private metaChecksum = false;
  private metaLast = -1;

  private readonly summaries = new Bytes();
  private readonly cards = new Bytes();
  private readonly blocks = new CardBlocks((block) => this.cards.append(block));
  private readonly strings = new Bytes();
  private readonly postings = new Bytes();
  private readonly links = new Bytes();
  private readonly refTexts = new Bytes();
  private readonly imageRefs = new Bytes();
  private readonly signatures = new Bytes();
  private problems: string[] = [];

  chew(task: ChewTask): ChewResult {
    if (this.spellings.size > task.maxSpellings) this.forget();
    this.problems = [];
    const segments: WordSegment[] = [];
    this.beginSegment();
    const { hashes, words } = task.signatures;
    const settings = this.shingler?.settings;
    if (settings?.hashes !== hashes || settings.words !== words) this.shingler = new Shingler(task.signatures);
    const reader = BucketReader.open(task.buckets);
    try {
      if (reader.generation !== task.generation) {
        throw new SherlockError('SHERLOCK_NOT_FOUND', `the bucket file was shaken during the build (generation ${reader.generation}, the scan read ${task.generation}): build again`, { file: task.buckets });
      }
      this.blocks.restart(task.first);
      const count = task.images?.length ?? task.oids.length;
      for (let i = 0; i < count; i++) {
        // A card's words are known only once it is cut: the share may be passed by one card's spellings.
        if (i > 0 && this.spellings.size > task.maxSpellings) {
          segments.push(this.endSegment());
          this.forget();
          this.beginSegment();
        }
        if (task.images === undefined) this.card(reader, task.oids[i]!, task.first + i, task.flags[i]!);
        else this.imageCard(task.images[i]!, task.first + i);
      }
      this.blocks.close();
    } finally {
      reader.close();
    }
    segments.push(this.endSegment());
    return {
      summaries: this.summaries.take(),
      cards: this.cards.take(),
      strings: this.strings.take(),
      thread: threadId,
      segments,
      links: this.links.take(),
      refTexts: this.refTexts.take(),
      imageRefs: this.imageRefs.take(),
      signatures: this.signatures.take(),
      problems: this.problems,
    };
  }

  private beginSegment(): void {
    this.batchSerial += 1;
    this.batchWords = [];
  }

  /** The words and postings since beginSegment(). */
  private endSegment(): WordSegment {
    const usage = new Uint32Array(2 * this.batchWords.length);
    this.batchWords.forEach((w, b) => {
      usage[2 * b] = w;
      usage[2 * b + 1] = this.occurrencesOf[b]!;
    });
    this.occurrencesOf.fill(0, 0, this.batchWords.length);
    const firstWord = this.reported;
    const fresh = this.exact.slice(firstWord);
    this.reported = this.exact.length;
    return {
      epoch: this.epoch,
      firstWord,
      words: fresh.map((word) => word + '\n').join(''),
      plains: fresh.map((word, k) => (this.plain[firstWord + k] === word ? '' : this.plain[firstWord + k]) + '\n').join(''),
      stems: fresh.map((_, k) => this.stem[firstWord + k] + '\n').join(''),
      usage,
      postings: this.postings.take(),
    };
  }

  /** Drops every word (bounded memory on any corpus); the main thread sees the new epoch. */
  private forget(): void {
    this.spellings.clear();
    this.exacts.clear();
    this.exact = [];
    this.plain = [];
    this.stem = [];
    this.utf8Used = 0;
    this.reported = 0;
    this.epoch += 1;
    this.perWord.fill(0);
  }

  private card(reader: BucketReader, oid: number, cardId: number, scanFlags: number): void {
    const stored = reader.read(oid);
    let header: BucketObject;
    let doc: DocumentBody | undefined;
    let text: DocTextToken[] = [];
    try {
      const bucket = reader.decode(stored);
      header = bucket.header;
      doc = parseBody(bucket.body);
      if ((scanFlags & CARD_FLAG.empty) === 0 && !doc.robots.noindex) text = readDocText(doc.text);
    } catch (err) {
      if (!isSherlockError(err)) throw err;
      this.problems.push(`oid ${oid}: ${err.message}`);
      // The scan read this header: only the body is damaged.
      header = decodeBucketHeader(stored.type, stored.data, { file: reader.path, offset: stored.offset + BUCKET_HEADER_SIZE });
      doc = undefined;
    }
    const url = header.string('U')!;
    const mime = header.string('T') ?? '';
    const date = whole(header.string('L')) ?? whole(header.string('D')) ?? 0;
    let flags = scanFlags;
    if (doc === undefined || doc.robots.noindex) flags |= CARD_FLAG.empty;
    if (doc !== undefined && doc.text.length === 0 && doc.links.some((link) => link.type === 'F')) flags |= CARD_FLAG.frameset;
    if (doc !== undefined && !doc.robots.nofollow) this.addLinks(doc, cardId);
    const indexed = (flags & CARD_FLAG.empty) === 0 ? doc : undefined;
    this.index({ cardId, url, mime, date, flags, arc: arcPlace(header.string('a')) }, doc, indexed, text);
    if (indexed !== undefined) this.addImageRefs(indexed, url, date);
  }

  /** An image card: its alt texts as a document of their own. */
  private imageCard(image: ImageCard, cardId: number): void {
    const builder = new TextBuilder(MAX_BODY_LENGTH);
    for (const text of image.texts) {
      builder.append(text);
      builder.breakBlock();
    }
    const doc: DocumentBody = { title: image.texts[0]!, text: builder.finish(), metas: [], links: [], robots: noRobots(), detectedLanguage: languageOf(image.language) };
    this.index({ cardId, url: image.url, mime: imageType(image.url), date: image.date, flags: 0, arc: NO_RECORD, referrer: image.referrer }, doc, doc, readDocText(doc.text));
  }

  /** The card, words, summary, strings and signature of card `facts.cardId`; `indexed` is `doc` unless the card is empty. */
  private index(facts: { cardId: number; url: string; mime: string; date: number; flags: number; arc: ArcPlace; referrer?: string }, doc: DocumentBody | undefined, indexed: DocumentBody | undefined, text: readonly DocTextToken[]): void {
    const { cardId, url, mime, date } = facts;
    const image = facts.referrer !== undefined;
    let flags = facts.flags;
    this.cardLanguage = indexed === undefined ? 'und' : cardLanguage(indexed);
    this.stemLanguage = this.cardLanguage;
    if (indexed !== undefined && this.cardLanguage !== 'und') this.languages[languageCode(this.cardLanguage)]! += 1;
    // A page too short to tell is most likely in the language of most pages so far (a site's pages come together, in crawl order).
    else if (indexed !== undefined) this.stemLanguage = languageOf(this.languages.indexOf(Math.max(...this.languages)));
    const summary = this.summaries.reserve(SUMMARY_SIZE);
    const s = this.summaries.data;
    s.fill(0, summary, summary + SUMMARY_SIZE);
    const strings = this.strings.reserve(STRING_KEYS_SIZE);
    this.strings.data.fill(0, strings, strings + STRING_KEYS_SIZE);
    const signatureBytes = 4 * this.shingler!.minima.length;
    const signature = this.signatures.reserve(signatureBytes);
    this.signatures.data.fill(0, signature, signature + signatureBytes);
    this.metaEnd = 0;
    this.bodyWords = 0;
    if (indexed !== undefined) {
      if (this.words(indexed, text, url, cardId, s, summary + 16)) flags |= CARD_FLAG.accented;
      if (image) s.fill(0, summary + 16, summary + 32);
      else this.shingler!.finish(this.signatures.data, signature);
      const values = urlStrings(url);
      STRING_KINDS.forEach((kind, k) => stringKey(kind, values[kind]).copy(this.strings.data, strings + k * FINGERPRINT_SIZE));
    }
    this.strings.length += STRING_KEYS_SIZE;
    this.signatures.length += signatureBytes;
    this.blocks.add({
      cardId,
      url,
      ...(indexed?.title === undefined ? {} : { title: indexed.title }),
      text: indexed?.text ?? NO_TEXT,
      type: mime === '' ? 'application/octet-stream' : mime,
      size: image ? 0 : (doc?.text.length ?? 0),
      date,
      arc: facts.arc,
      ...(indexed?.pages === undefined ? {} : { pages: indexed.pages }),
      ...(image ? { referrer: facts.referrer! } : {}),
    });
    s.writeUInt32LE(date, summary);
    s.writeUInt32LE(siteFootprint(url).readUInt32LE(0), summary + 4);
    s[summary + 8] = flags;
    s[summary + 9] = image ? IMAGE : CARD_TYPES.indexOf(cardType(mime));
    s.writeUInt16LE(url.length, summary + 10);
    s[summary + 12] = image ? NEVER_MERGED : 0;
    footprint(url).copy(s, summary + 32);
    s.writeUInt16LE(this.metaEnd, summary + 48);
    s[summary + 50] = lengthCode(this.bodyWords);
    s[summary + 51] = languageCode(this.cardLanguage);
    this.summaries.length += SUMMARY_SIZE;
  }

  /**
   * The fingerprint of a link's URL, undefined when it is not one we could
   * resolve. Pages of a site link the same pages over and over (menus,
   * navigation), and each anchor needs it twice (Links, RefTexts): the
   * canonical key and MD5 are made once per URL while the cache holds.
   */
  private target(url: string): Buffer | undefined {
    let target = this.targets.get(url);
    if (target === undefined && !this.targets.has(url)) {
      try {
        target = fingerprint(url);
      } catch (err) {
        if (!isSherlockError(err)) throw err;
      }
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }

  /** An image reference for each `I` link of the page with an alt text. */
  private addImageRefs(doc: DocumentBody, page: string, date: number): void {
    for (const link of doc.links) {
      if (link.type !== 'I' || link.text === undefined) continue;
      const target = this.target(link.url);
      if (target === undefined) continue;
      const url = Buffer.from(link.url, 'utf8');
      const alt = Buffer.from(link.text, 'utf8');
      const referrer = Buffer.from(page, 'utf8');
      if (Math.max(url.length, alt.length, referrer.length) > 0xffff) continue;
      const at = this.imageRefs.reserve(IMAGE_REF_HEAD + url.length + alt.length + referrer.length);
      const out = this.imageRefs.data;
      target.copy(out, at);
      out.writeUInt32LE(date, at + 12);
      out[at + 16] = languageCode(this.cardLanguage);
      out.writeUInt16LE(url.length, at + 17);
      out.writeUInt16LE(alt.length, at + 19);
      out.writeUInt16LE(referrer.length, at + 21);
      url.copy(out, at + IMAGE_REF_HEAD);
      alt.copy(out, at + IMAGE_REF_HEAD + url.length);
      referrer.copy(out, at + IMAGE_REF_HEAD + url.length + alt.length);
      this.imageRefs.length += IMAGE_REF_HEAD + url.length + alt.length + referrer.length;
    }
  }

  private addLinks(doc: DocumentBody, cardId: number): void {
    for (const link of doc.links) {
      const target = this.target(link.url);
      if (target === undefined) continue; // not an http(s) URL we could ever resolve
      const at = this.links.reserve(LINK_RECORD);
      target.copy(this.links.data, at);
      this.links.data.writeUInt32LE((cardId | (LINK_TYPE_NUMBER.get(link.type)! << 30)) >>> 0, at + FINGERPRINT_SIZE);
      this.links.length += LINK_RECORD;
    }
  }

  /** The worker word of a spelling the table does not know yet, learning its forms. */
  private learn(raw: string): number {
    const exact = exactForm(raw);
    const bytes = Buffer.byteLength(exact, 'utf8');
    let w: number;
    if (bytes > MAX_WORD_BYTES) {
      w = GARBAGE;
    } else {
      const known = this.exacts.get(exact);
      if (known !== undefined) {
        w = known;
      } else {
        w = this.exact.length;
        const plain = plainForm(exact);
        this.exact.push(exact);
        this.plain.push(plain);
        const stem = indexStem(exact, plain, this.stemLanguage);
        this.stem.push(stem.language === 0 ? '' : `${stem.language} ${stem.stem}`);
        this.exacts.set(exact, w);
        this.perWord = grow(this.perWord, (w + 1) * WORD_FIELDS);
        if (this.utf8Used + bytes > this.utf8.length) {
          const grown = Buffer.allocUnsafeSlow(2 * this.utf8.length);
          this.utf8.copy(grown, 0, 0, this.utf8Used);
          this.utf8 = grown;
        }
        const fields = w * WORD_FIELDS;
        this.perWord[fields + W_UTF8_AT] = this.utf8Used;
        this.perWord[fields + W_UTF8_LENGTH] = bytes;
        this.utf8Used += this.utf8.write(exact, this.utf8Used);
        this.perWord[fields + W_ACCENTED] = plain === exact ? 0 : 1;
        this.perWord[fields + W_HASH] = spellingHash(exact, 0, exact.length);
      }
    }
    this.spellings.insert(raw, w);
    return w;
  }

  /**
   * Records one occurrence of the word at this.text[start, end); `info`
   * packs position (bits 0–15), type (16–19), weight (20–21), meta (22).
   */
  private occur(start: number, end: number, hash: number, info: number, checksum: boolean): void {
    let w = this.spellings.find(this.text, start, end, hash);
    if (w === ABSENT) w = this.learn(flat(this.text.slice(start, end)));
    if (w === GARBAGE) return;
    const { perWord } = this;
    const fields = w * WORD_FIELDS;
    if (perWord[fields + W_BATCH_STAMP] !== this.batchSerial) {
      perWord[fields + W_BATCH_STAMP] = this.batchSerial;
      perWord[fields + W_BATCH_OF] = this.batchWords.length;
      this.batchWords.push(w);
      this.occurrencesOf = grow(this.occurrencesOf, this.batchWords.length);
    }
    this.occurrencesOf[perWord[fields + W_BATCH_OF]!]! += 1;
    let slot: number;
    if (perWord[fields + W_CARD_STAMP] !== this.cardSerial) {
      perWord[fields + W_CARD_STAMP] = this.cardSerial;
      slot = this.slots++;
      perWord[fields + W_SLOT_OF] = slot;
      if (slot >= this.slotWord.length) {
        const size = 2 * this.slotWord.length;
        this.slotWord = grow(this.slotWord, size);
        this.slotCount = grow(this.slotCount, size);
        this.slotEdge = grow(this.slotEdge, size);
        this.slotStart = grow(this.slotStart, size + 1);
      }
      this.slotWord[slot] = w;
      this.slotCount[slot] = 0;
      this.slotEdge[slot] = 0;
    } else {
      slot = perWord[fields + W_SLOT_OF]!;
    }
    if ((info & META_BIT) === 0 && (info & 0xffff) > MAX_WORD_POSITION) {
      if (this.slotEdge[slot] === 1) return;
      this.slotEdge[slot] = 1;
      info = (info & ~0xffff) | WORD_EDGE;
    }
    const n = this.occurrences++;
    if (n >= this.occSlot.length) {
      this.occSlot = grow(this.occSlot, n + 1);
      this.occInfo = grow(this.occInfo, n + 1);
      this.order = grow(this.order, n + 1);
    }
    this.occSlot[n] = slot;
    this.occInfo[n] = info;
    this.slotCount[slot]! += 1;
    if (checksum) {
      const length = perWord[fields + W_UTF8_LENGTH]!;
      const from = perWord[fields + W_UTF8_AT]!;
      const at = this.checksum.reserve(length + 1);
      const { utf8 } = this;
      const out = this.checksum.data;
      for (let k = 0; k < length; k++) out[at + k] = utf8[from + k]!;
      out[at + length] = 0x20;
      this.checksum.length += length + 1;
      if (this.shingling) this.shingler!.add(perWord[fields + W_HASH]!);
    }
  }

  private readonly visitMeta = (start: number, end: number, kind: RawKind, position: number, hash: number): void => {
    const at = this.metaBase + position;
    if (at > MAX_META_POSITION) return;
    this.metaLast = position;
    if (kind !== 'garbage') this.occur(start, end, hash, at | this.metaBits, this.metaChecksum);
  };

  private readonly visitText = (start: number, end: number, kind: RawKind, position: number, hash: number): void => {
    if (kind !== 'garbage') this.occur(start, end, hash, Math.min(this.textBase + position, WORD_EDGE) | this.textBits, true);
  };

  /** The words of a meta text from meta position `from`; returns where the next meta starts. */
  private meta(text: string, type: number, weight: number, from: number, checksum: boolean): number {
    this.text = text;
    this.metaBase = from;
    this.metaBits = (type << 16) | (weight << 20) | META_BIT;
    this.metaChecksum = checksum;
    this.metaLast = -1;
    cutWords(text, this.visitMeta);
    return this.metaLast < 0 ? from : from + this.metaLast + 2;
  }

  /**
   * Cuts the card's texts (`text`: its `X` tokens), writes its chains and
   * anchor texts and its checksum at `checksumAt`; returns whether a word
   * has accents.
   */
  private words(doc: DocumentBody, text: readonly DocTextToken[], url: string, cardId: number, out: Buffer, checksumAt: number): boolean {
    this.cardSerial += 1;
    this.slots = 0;
    this.occurrences = 0;
    this.checksum.length = 0;
    this.shingler!.reset();
    this.shingling = true;
    let metaAt = 0;
    if (doc.title !== undefined) metaAt = this.meta(doc.title, META_TYPE.title, titleWeight(doc.title), metaAt, true);
    for (const meta of doc.metas) metaAt = this.meta(meta.text, META_TYPE[meta.type], meta.weight ?? 0, metaAt, false);
    this.metaEnd = Math.min(MAX_META_POSITION + 1, this.meta(urlText(url), META_TYPE.urlword, 0, metaAt, false));
    const anchors = doc.links.filter((link) => link.type === 'R');
    // A site's menus are on all its pages: near-duplicates are told by the rest.
    const linked = linkBlocks(text);
    let block = 0;
    let base = 0;
    let anchor = -1;
    let anchorText: string[] = [];
    for (const token of text) {
      if (token.kind === 'text') {
        this.shingling = linked[block] === 0;
        this.text = token.text;
        this.textBits = token.type << 16;
        this.textBase = base;
        const words = cutWords(token.text, this.visitText);
        base += words;
        this.bodyWords += words;
        if (anchor >= 0) anchorText.push(token.text);
      } else if (token.kind === 'break') {
        if (base > 0) base += 1;
        block += 1;
      } else if (token.kind === 'link-open') {
        anchor = token.n;
        anchorText = [];
      } else {
        const target = anchors[anchor];
        if (target !== undefined && !doc.robots.nofollow) this.anchorText(cardId, target.url, anchorText.join(''));
        anchor = -1;
      }
    }
    // The words joined by spaces: the last one's space left out.
    createHash('md5').update(this.checksum.data.subarray(0, Math.max(0, this.checksum.length - 1))).digest().copy(out, checksumAt);
    return this.chains(cardId);
  }

  private anchorText(cardId: number, url: string, text: string): void {
    const collapsed = text.replace(/\s+/g, ' ').trim();
    if (collapsed === '') return;
    const target = this.target(url);
    if (target === undefined) return;
    let bytes = Buffer.from(collapsed, 'utf8');
    // Cut at a character boundary: a UTF-16 unit is at most 3 bytes.
    if (bytes.length > MAX_REFTEXT_BYTES) bytes = Buffer.from(collapsed.slice(0, Math.floor(MAX_REFTEXT_BYTES / 3)), 'utf8');
    const at = this.refTexts.reserve(REFTEXT_HEAD + bytes.length);
    const out = this.refTexts.data;
    out.writeUInt32LE(cardId, at);
    target.copy(out, at + 4);
    out.writeUInt16LE(bytes.length, at + 16);
    bytes.copy(out, at + REFTEXT_HEAD);
    this.refTexts.length += REFTEXT_HEAD + bytes.length;
  }

  /** Groups the card's occurrences by word (stable: metas first, then words by position) and writes one chain per word. */
  private chains(cardId: number): boolean {
    const { slots, occurrences, slotCount, slotStart, order, occSlot, occInfo, builder } = this;
    slotStart[0] = 0;
    for (let s = 0; s < slots; s++) slotStart[s + 1] = slotStart[s]! + slotCount[s]!;
    for (let n = 0; n < occurrences; n++) order[slotStart[occSlot[n]!]!++] = n;
    let accented = false;
    let begin = 0;
    for (let s = 0; s < slots; s++) {
      const w = this.slotWord[s]!;
      const end = begin + slotCount[s]!;
      builder.reset();
      for (let k = begin; k < end; k++) {
        const info = occInfo[order[k]!]!;
        const position = info & 0xffff;
        const type = (info >>> 16) & 15;
        if ((info & META_BIT) !== 0) builder.meta(type, (info >>> 20) & 3, position);
        else builder.word(type, position);
      }
      begin = end;
      const size = builder.chainSize;
      const at = this.postings.reserve(POSTING_HEAD + size);
      const out = this.postings.data;
      out.writeUInt32LE(w, at);
      out.writeUInt32LE(size, at + 4);
      builder.writeTo(cardId, out, at + POSTING_HEAD);
      this.postings.length += POSTING_HEAD + size;
      if (this.perWord[w * WORD_FIELDS + W_ACCENTED] === 1) accented = true;
    }
    return accented;
  }
}

const chewer = new Chewer();

/** The piscina entry point: chews a batch, returning its buffers for transfer. */
export default function chewBatch(task: ChewTask): unknown {
  const result = chewer.chew(task);
  const transfer = [result.summaries, result.cards, result.strings, ...result.segments.flatMap((segment) => [segment.usage, segment.postings]), result.links, result.refTexts, result.imageRefs, result.signatures].map((a) => a.buffer);
  return move({
    get [transferableSymbol]() {
      return transfer;
    },
    get [valueSymbol]() {
      return result;
    },
  } as unknown as Parameters<typeof move>[0]);
}
