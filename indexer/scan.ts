/**
 * Stage 1, scan (DESIGN §6): which buckets become cards. Reads the headers
 * of every bucket in `state/gather/buckets` (bodies are not inflated: the
 * chewer does that once) and keeps, per URL key fingerprint (common/url.ts,
 * so `www.` and bare hosts are one document), the newest bucket that says
 * what the document is now:
 *
 *   code 0 ok, 2305 too large (cut, but parsed)   the document
 *   code 1 redirect                               an empty card (CARD_FLAG.empty),
 *                                                 kept so that the merge stage
 *                                                 can fold it into its target
 *   code 3 not modified, other codes < 2000,      say nothing new: the version
 *   2308 taken down (not requested)               before stays
 *   other codes ≥ 2000 (404, robots denied, …)    the document is gone
 *   K=robots (robots.txt)                         not a document
 *
 * A URL a site rule says `index = false` of (common/site-rules.ts: stored,
 * not indexed) is gone whatever its bucket says, so a version indexed before
 * the rule leaves the index with the next build. A rule's `weight` of each
 * card's URL is kept for the links stage (`bonus`).
 *
 * Newest is by download time (D), ties going to the later stored: the
 * gatherer stores in fetch order, but `sherlock import archive` stores
 * captures in the order of the files given, an old one after a newer fetch
 * or capture of the same URL perhaps. Noindex pages are known only from their body: the chewer makes those
 * empty. Cards get ids 0, 1, 2, … in the order of their buckets, which is
 * also the order the chewer reads them in.
 *
 * A bucket whose URL a takedown hides (common/takedowns.ts) is passed over
 * as if it were not there: no card, and `takenDown` counts its URL keys.
 *
 * Output: Attributes (work-files.ts). A damaged stretch of the bucket file or
 * a bucket whose header does not decode is skipped with a warning: one bad
 * bucket must not stop the index.
 */

import { decodeBucketHeader } from '../common/bucket/bucket.js';
import { BUCKET_HEADER_SIZE, BucketReader, oidAfter } from '../common/bucket/file.js';
import { isSherlockError, SherlockError } from '../common/errors.js';
import { CARD_FLAG } from '../common/index/cardinfo.js';
import { MAX_CARD_ID } from '../common/index/refs.js';
import { logger } from '../common/log.js';
import type { TakedownSet } from '../common/takedowns.js';
import { SiteRules } from '../common/site-rules.js';
import { fingerprint } from '../common/url.js';
import { FINGERPRINT_SIZE, writeAttributes, type Attributes } from './work-files.js';

const log = logger('indexer');

/** Outcome codes (gatherer/outcome.ts, docs/gatherer.md) the scan tells apart. */
const CODE = { ok: 0, redirect: 1, tooLarge: 2305, takenDown: 2308, permanent: 2000 } as const;

export interface ScanReport extends Attributes {
  /** Buckets read, robots buckets and failures included. */
  buckets: number;
  /** Buckets skipped as damaged or undecodable. */
  bad: number;
  /** The oid after the last bucket read: where buckets stored after this scan begin. */
  next: number;
  /** Documents (URL keys) left out because a takedown hides them. */
  takenDown: number;
  /** Per card, its site rules' weight (-1 to 1); undefined without rules. */
  bonus: Float32Array | undefined;
}

/** What a bucket says of its URL: a version to index (`document`, `redirect`), `gone`, or nothing new. */
function verdict(code: number): 'document' | 'redirect' | 'gone' | undefined {
  if (code === CODE.ok || code === CODE.tooLarge) return 'document';
  if (code === CODE.redirect) return 'redirect';
  return code >= CODE.permanent && code !== CODE.takenDown ? 'gone' : undefined;
}

/** A slot's value for a URL whose newest bucket says it is gone. */
const GONE = -1;

/** Scans the bucket file `buckets`, writes `attributesFile`; `onProgress` gets the buckets read so far. */
export function scan(buckets: string, attributesFile: string, takedowns: TakedownSet, onProgress?: (read: number) => void, rules = SiteRules.none): ScanReport {
  const reader = BucketReader.open(buckets);
  // Per fingerprint (latin1 string of its 12 bytes): its slot in `chosen` and `times`.
  const slots = new Map<string, number>();
  // Per slot: oid × 2, plus 1 for a redirect, or GONE; and the D of the bucket that decided it.
  const chosen: number[] = [];
  const times: number[] = [];
  const bonuses: number[] = [];
  let read = 0;
  let bad = 0;
  let next = 1;
  const takenDown = new Set<string>();
  try {
    const onDamage = (damage: { offset: number; message: string }) => {
      bad += 1;
      log.warning('damaged buckets skipped', { file: buckets, offset: damage.offset, problem: damage.message });
    };
    for (const stored of reader.buckets({ onDamage })) {
      read += 1;
      next = oidAfter(stored);
      if ((read & 0xfff) === 0) onProgress?.(read);
      let url: string | undefined;
      let key: string;
      let time: number;
      let code = 0;
      try {
        const header = decodeBucketHeader(stored.type, stored.data, { file: buckets, offset: stored.offset + BUCKET_HEADER_SIZE });
        if (header.string('K') === 'robots') continue;
        url = header.string('U');
        if (url === undefined) throw new SherlockError('SHERLOCK_CORRUPT_BUCKET', 'no U (URL) attribute');
        key = fingerprint(url).toString('latin1');
        time = Number(header.string('D'));
        if (!Number.isSafeInteger(time)) throw new SherlockError('SHERLOCK_CORRUPT_BUCKET', `attribute D is not a time: ${JSON.stringify(header.string('D')?.slice(0, 40))}`);
        const error = header.string('!');
        if (error !== undefined) {
          const m = /^(\d{1,5})\b/.exec(error);
          if (m === null) throw new SherlockError('SHERLOCK_CORRUPT_BUCKET', `attribute ! does not start with a code: ${JSON.stringify(error.slice(0, 40))}`);
          code = Number(m[1]);
        }
      } catch (err) {
        if (!isSherlockError(err)) throw err;
        bad += 1;
        log.warning('bucket skipped', { file: buckets, oid: stored.oid, url, problem: err.message });
        continue;
      }
      if (takedowns.size > 0 && takedowns.hidesAny(url)) {
        takenDown.add(key);
        continue;
      }
      let what = verdict(code);
      if (what === undefined) continue;
      // One match of the rules a bucket: their prefix and regex rules are tried in turn.
      const settings = rules.empty ? undefined : rules.effective(url).settings;
      if (what !== 'gone' && settings?.index === false) what = 'gone';
      let slot = slots.get(key);
      if (slot === undefined) {
        slot = slots.size;
        slots.set(key, slot);
      } else if (time < times[slot]!) continue;
      chosen[slot] = what === 'gone' ? GONE : stored.oid * 2 + (what === 'redirect' ? 1 : 0);
      times[slot] = time;
      if (settings !== undefined) bonuses[slot] = settings.weight ?? 0;
    }
    onProgress?.(read);
    const keys: string[] = [];
    const values: number[] = [];
    const kept: number[] = [];
    for (const [key, slot] of slots) {
      if (chosen[slot] === GONE) continue;
      keys.push(key);
      values.push(chosen[slot]!);
      kept.push(slot);
    }
    const cards = keys.length;
    if (cards > MAX_CARD_ID + 1) throw new RangeError(`${cards} documents: an index version holds at most ${MAX_CARD_ID + 1}`);
    const order = Uint32Array.from(keys.keys()).sort((a, b) => values[a]! - values[b]!);
    const oids = new Uint32Array(cards);
    const flags = new Uint8Array(cards);
    const fingerprints = Buffer.alloc(cards * FINGERPRINT_SIZE);
    const bonus = rules.empty ? undefined : new Float32Array(cards);
    order.forEach((k, id) => {
      if (bonus !== undefined) bonus[id] = bonuses[kept[k]!]!;
      oids[id] = Math.floor(values[k]! / 2);
      flags[id] = values[k]! % 2 === 1 ? CARD_FLAG.empty : 0;
      fingerprints.write(keys[k]!, id * FINGERPRINT_SIZE, 'latin1');
    });
    for (const key of slots.keys()) takenDown.delete(key);
    const report = { generation: reader.generation, cards, oids, fingerprints, flags, buckets: read, bad, next, takenDown: takenDown.size, bonus };
    writeAttributes(attributesFile, report);
    return report;
  } finally {
    reader.close();
  }
}
