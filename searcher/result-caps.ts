/**
 * The site rules' `result_cap` in the searcher (docs/site-rules.md): how many
 * results of a site one result list shows at most, over the whole ranking
 * (so that page 2 shows none of a site whose cap page 1 filled).
 *
 * Per version and rules, a cap per dense site number (IndexVersion.siteValues,
 * as takedowns are mapped to sites), made before the version or the rules
 * serve. Ranking keeps a capped site's best `cap` cards in a small top of
 * their own and the other sites' in the main top, so that a capped site
 * with thousands of matches cannot crowd the others out of the candidates;
 * the main top's floor still bounds pruning, since a card below it has k
 * better ones. Site collapsing (rank.ts collapse) then orders the merged
 * candidates into pages as before.
 */

import type { SiteRules } from '../common/site-rules.js';
import type { IndexVersion } from './index-version.js';
import { TopK, type Scored } from './rank.js';

/** The result caps of `version`'s sites under `rules`, or undefined when no site of it is capped. */
export function siteCaps(version: IndexVersion, rules: SiteRules): Uint16Array | undefined {
  if (!rules.sets('result_cap')) return undefined;
  return version.siteValues((host) => rules.hostSetting(host, 'result_cap') ?? 0);
}

/** A top-k in which a capped site has at most its cap (module comment). */
export class CappedTop {
  private readonly main: TopK;
  private readonly capped = new Map<number, TopK>();

  constructor(
    private readonly k: number,
    private readonly site: Uint32Array,
    private readonly caps: Uint16Array,
  ) {
    this.main = new TopK(k);
  }

  push(cardId: number, score: number): void {
    const s = this.site[cardId]!;
    const cap = this.caps[s]!;
    if (cap === 0) {
      this.main.push(cardId, score);
      return;
    }
    let top = this.capped.get(s);
    if (top === undefined) this.capped.set(s, (top = new TopK(Math.min(cap, this.k))));
    top.push(cardId, score);
  }

  floor(): number {
    return this.main.floor();
  }

  /** The k best of all, best first as TopK.best gives them (higher score, then lower card id). */
  best(): Scored[] {
    const all = this.main.best();
    for (const top of this.capped.values()) all.push(...top.best());
    all.sort((a, b) => b.score - a.score || a.cardId - b.cardId);
    return all.slice(0, this.k);
  }
}
