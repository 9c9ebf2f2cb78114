/**
 * One index version (`state/index/<version>/`, docs/indexer.md) opened
 * read-only for searching. Opening verifies the Manifest (every file's size
 * and CRC), so a damaged or half-copied version is refused before it serves
 * a query. The Lexicon and CardInfo are held in memory (a lookup is an array
 * access); WordIndex, StringIndex and Cards are read on demand, with the
 * chains of recent words and recent cards kept in bounded caches.
 *
 * A version is shared by every query that started on it: acquire() and
 * release() count them, and retire() closes the files once the last one is
 * done, so a live swap never pulls a file from under a running query.
 */

import { join } from 'node:path';
import { CardInfoReader, type CardInfo } from '../common/index-cardinfo.js';
import { CardsReader, type Card } from '../common/index-cards.js';
import { StringIndexReader, WordIndexReader, stringKey, type StringKind } from '../common/index-chains.js';
import { Lexicon, type LexiconEntry } from '../common/index-lexicon.js';
import { verifyIndexDir, type Manifest } from '../common/index-manifest.js';
import type { Chain } from '../common/index-refs.js';
import { plainForm } from '../common/words.js';

/** Encoded chain bytes whose decoded chains the cache keeps. */
const CHAIN_CACHE_BYTES = 32 * 1024 * 1024;
const CARD_CACHE_CARDS = 2048;

/** A map that forgets its least recently used entries beyond `capacity` (counted by `cost`). */
class Lru<K, V> {
  private readonly map = new Map<K, { value: V; cost: number }>();
  private total = 0;

  constructor(
    private readonly capacity: number,
    private readonly cost: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, slot);
    return slot.value;
  }

  set(key: K, value: V): void {
    const cost = this.cost(value);
    if (cost > this.capacity) return;
    this.map.set(key, { value, cost });
    this.total += cost;
    for (const [oldest, slot] of this.map) {
      if (this.total <= this.capacity) break;
      this.map.delete(oldest);
      this.total -= slot.cost;
    }
  }
}

export class IndexVersion {
  private readonly chainCache = new Lru<number, Chain[]>(CHAIN_CACHE_BYTES, (chains) => chains.length * 64);
  private readonly cardCache = new Lru<number, Card>(CARD_CACHE_CARDS, () => 1);
  /** Lexicon indexes sorted by plain form, made on the first prefix query. */
  private byPlain: { plain: string[]; entry: number[] } | undefined;
  private users = 0;
  private retired = false;
  private closed = false;

  private constructor(
    readonly name: string,
    readonly manifest: Manifest,
    readonly lexicon: Lexicon,
    readonly cardInfo: CardInfoReader,
    private readonly words: WordIndexReader,
    private readonly strings: StringIndexReader,
    private readonly cards: CardsReader,
  ) {}

  /** Opens the version in `dir`, verifying its Manifest first; SHERLOCK_CORRUPT_INDEX names a damaged file. */
  static open(dir: string, name: string): IndexVersion {
    const manifest = verifyIndexDir(dir);
    const opened: Array<{ close(): void }> = [];
    const keep = <T extends { close(): void }>(reader: T): T => {
      opened.push(reader);
      return reader;
    };
    try {
      const words = keep(WordIndexReader.open(join(dir, 'WordIndex')));
      const strings = keep(StringIndexReader.open(join(dir, 'StringIndex')));
      const cards = keep(CardsReader.open(join(dir, 'Cards')));
      return new IndexVersion(name, manifest, Lexicon.open(join(dir, 'Lexicon')), CardInfoReader.open(join(dir, 'CardInfo')), words, strings, cards);
    } catch (err) {
      for (const reader of opened) reader.close();
      throw err;
    }
  }

  get cardCount(): number {
    return this.cardInfo.count;
  }

  /** The chains of a Lexicon entry, at most `max` (fewer cards, lowest ids first, when the work bound cuts it). */
  chains(entry: LexiconEntry, max = Infinity): Chain[] {
    if (entry.chainSize === 0) return [];
    const cached = this.chainCache.get(entry.id);
    if (cached !== undefined) return cached.length > max ? cached.slice(0, max) : cached;
    const chains = this.words.chains(entry.id, entry.refPos, max);
    if (chains.length < max) this.chainCache.set(entry.id, chains);
    return chains;
  }

  /** The cards a StringIndex string (url, host, domain) names. */
  stringChains(kind: StringKind, value: string): Chain[] {
    return this.strings.chains(stringKey(kind, value));
  }

  info(cardId: number): CardInfo {
    return this.cardInfo.get(cardId);
  }

  card(cardId: number): Card {
    let card = this.cardCache.get(cardId);
    if (card === undefined) {
      card = this.cards.get(this.cardInfo.get(cardId).position, cardId);
      this.cardCache.set(cardId, card);
    }
    return card;
  }

  /**
   * Lexicon entries whose plain form starts with `prefix` (itself plain), the
   * most frequent first, at most `max`; `more` says some were left out.
   */
  prefixed(prefix: string, max: number): { entries: LexiconEntry[]; more: boolean } {
    const { entries } = this.lexicon;
    if (this.byPlain === undefined) {
      const plain = entries.map((e) => plainForm(e.word));
      const entry = entries.map((_, i) => i).sort((a, b) => (plain[a]! < plain[b]! ? -1 : plain[a]! > plain[b]! ? 1 : a - b));
      this.byPlain = { plain: entry.map((i) => plain[i]!), entry };
    }
    const { plain, entry } = this.byPlain;
    let low = 0;
    let high = plain.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (plain[mid]! < prefix) low = mid + 1;
      else high = mid;
    }
    const found: LexiconEntry[] = [];
    for (let i = low; i < plain.length && plain[i]!.startsWith(prefix); i++) found.push(entries[entry[i]!]!);
    found.sort((a, b) => b.frequency - a.frequency);
    return { entries: found.slice(0, max), more: found.length > max };
  }

  /** A query starts using the version. */
  acquire(): void {
    this.users += 1;
  }

  release(): void {
    this.users -= 1;
    if (this.retired && this.users === 0) this.close();
  }

  /** No new query will use it: its files close when the last running one releases it. */
  retire(): void {
    this.retired = true;
    if (this.users === 0) this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.words.close();
    this.strings.close();
    this.cards.close();
  }
}
