/**
 * Takedowns in the searcher (common/takedowns.ts): following the file, and
 * the cards of a version they hide.
 *
 * Following: fs.watch on the state directory (the file may not exist yet,
 * and an editor may replace it) tells at once; a stat every POLL_MS catches
 * what a watch misses (some file systems, a watch that failed). A change is
 * read and handed on as a whole new set, so within a second of the write.
 *
 * Hiding: per version and set, a byte per card (1 hidden), made before the
 * set or the version serves, so that evaluation leaves the cards out before
 * counting, faceting and ranking (index-engine.ts rankVersion) and totals
 * and facets agree with the hits. URLs are found by the StringIndex; a site
 * by the host of each dense site number (one card read a site); a prefix
 * among the cards of its host, each card's URL compared.
 */

import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { logger } from '../common/log.js';
import { TakedownFile, type TakedownSet } from '../common/takedowns.js';
import { urlParts } from '../common/url.js';
import type { IndexVersion } from './index-version.js';

const log = logger('searcher');

/** The stat poll's period: a missed watch event costs at most this. */
export const POLL_MS = 250;

/** The cards of `version` that `set` hides, or undefined when it hides none. */
export function takenDownCards(version: IndexVersion, set: TakedownSet): Uint8Array | undefined {
  if (set.size === 0) return undefined;
  const hidden = new Uint8Array(version.cardCount);
  let any = false;
  const mark = (cardId: number): void => {
    hidden[cardId] = 1;
    any = true;
  };
  for (const url of set.urls) for (const cardId of version.stringCards('url', url)) mark(cardId);
  const sites = set.sites.size > 0 ? version.siteValues((host) => (set.hidesHost(host) ? 1 : 0)) : undefined;
  if (sites !== undefined) {
    const { site } = version.columns;
    for (let cardId = 0; cardId < site.length; cardId++) if (sites[site[cardId]!] === 1) mark(cardId);
  }
  for (const host of new Set(set.prefixes.map((prefix) => urlParts(prefix).host))) {
    for (const cardId of version.stringCards('host', host)) if (hidden[cardId] === 0 && set.hides(version.cardUrl(cardId))) mark(cardId);
  }
  return any ? hidden : undefined;
}

/** Follows `state/takedowns`, calling `onChange` with the new set after each change (module comment). */
export class TakedownWatch {
  private readonly file: TakedownFile;
  private readonly watcher: FSWatcher | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    path: string,
    private readonly onChange: (set: TakedownSet) => void,
  ) {
    this.file = new TakedownFile(path);
    const name = basename(path);
    try {
      this.watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name) this.look();
      });
      this.watcher.on('error', (err) => log.warning('takedown file watch failed; its stat poll goes on', { file: path, problem: err.message }));
    } catch (err) {
      log.warning('cannot watch the takedown file; polling it', { file: path, problem: err instanceof Error ? err.message : String(err) });
    }
    this.timer = setInterval(() => this.look(), POLL_MS);
    this.timer.unref();
  }

  /** The set in force now (read at once); a file that cannot be read keeps the set read before (none at first), logged. */
  current(): TakedownSet {
    return this.file.inForce();
  }

  private look(): void {
    const set = this.file.poll();
    if (set === undefined) return;
    try {
      this.onChange(set);
    } catch (err) {
      log.err('takedowns not applied; the takedowns in force stay', { file: this.file.path, problem: err instanceof Error ? err.message : String(err) });
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.watcher?.close();
  }
}
