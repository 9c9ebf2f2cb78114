/**
 * Explain (`explain: true`, `sherlock search --explain`): each hit of a page
 * with the parts of its score, taken from the evaluator itself. Every node
 * of the query is evaluated once (evaluate.ts, the same code and work bound
 * as the search) and looked up at each hit's card, so a part is what the
 * ranking added, not a second computation of it; only a word's breakdown
 * (term frequency, metas, anchor texts, BM25F's score of them) is occurrenceScore's parts
 * made again from its occurrences in the card.
 *
 * A node's score is what it adds: an AND's is its children's plus the
 * proximity and title bonuses (`bonus`), an OR's the sum of the children the card
 * matches, a NEAR's both terms' plus its bonus, a phrase's its bonus plus
 * what each word adds within the phrase (the parts listed are the words'
 * scores in the whole card, which bound that). The hit's score is
 * (the query's + 1) × the static factor (rank.ts withStatic).
 */

import { META_TYPES } from '../common/bucket/doc-body.js';
import { PACKED_META } from '../common/index/refs.js';
import type { Explanation, FormMatch, ScorePart } from './engine.js';
import type { Evaluation, Hits } from './evaluate.js';
import type { IndexVersion } from './index-version.js';
import type { QueryNode, TermNode } from './query.js';
import { ACCENT_BONUS, FORM, FORM_FACTORS, NEAR_BONUS, PHRASE_BONUS, occurrenceScore, seek, withStatic, type OccurrenceParts } from './rank.js';
import { hasAccents } from '../common/words.js';

/** Names of the fields an occurrence is in: the body, or a meta type (anchor texts are "ext" in buckets). */
const FIELD_NAMES = META_TYPES.map((type) => (type === 'ext' ? 'anchor' : type === 'meta' ? 'description' : type === 'urlword' ? 'url' : type));
const MATCH_NAMES: Record<number, FormMatch> = { [FORM.stem]: 'stem', [FORM.synonym]: 'synonym', [FORM.synonymStem]: 'synonym stem' };

/** A query node as a user would write it. */
function label(node: QueryNode): string {
  const field = (n: { field?: string }) => (n.field === undefined ? '' : `${n.field}:`);
  switch (node.kind) {
    case 'word':
      return `${field(node)}${node.exact ? '=' : ''}${node.word.exact}${node.prefix ? '*' : ''}`;
    case 'phrase':
      return `${field(node)}${node.exact ? '=' : ''}"${node.words.map((w) => w.exact).join(' ')}"`;
    case 'near':
      return `${label(node.left)} NEAR/${node.distance} ${label(node.right)}`;
    case 'site':
      return `site:${node.host}`;
    case 'type':
      return `type:${node.types.join(',')}`;
    case 'lang':
      return `lang:${node.languages.join(',')}`;
    case 'date':
      return node.from <= 1 ? `before:${day(node.to)}` : `after:${day(node.from)}`;
    case 'not':
      return `-${label(node.child)}`;
    case 'and':
      return 'AND';
    case 'or':
      return 'OR';
  }
}

const day = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);

/** The explanations of `cards` (a page's hits) for `query`, with `evaluation` a fresh Evaluation of the search's version, signal and languages. */
export async function explainHits(version: IndexVersion, evaluation: Evaluation, query: QueryNode, cards: readonly number[]): Promise<Explanation[]> {
  const explainer = new Explainer(version, evaluation);
  const parts = await Promise.all(cards.map((cardId) => explainer.part(query, cardId)));
  return cards.map((cardId, i) => {
    const weight = version.columns.weight[cardId]!;
    return { score: withStatic(parts[i]!.score, weight), weight, factor: withStatic(0, weight), query: parts[i]! };
  });
}

class Explainer {
  /** Each node's hits, evaluated once for all the page's cards. */
  private readonly hits = new Map<QueryNode, Promise<Hits>>();

  constructor(
    private readonly version: IndexVersion,
    private readonly evaluation: Evaluation,
  ) {}

  /** The node's score in the card: 0 where it does not match it (a filter, an exclusion, an OR's other branch). */
  private async scoreOf(node: QueryNode, cardId: number): Promise<number> {
    let hits = this.hits.get(node);
    if (hits === undefined) this.hits.set(node, (hits = this.evaluation.run(node)));
    const { cards, count, scores } = await hits;
    const i = seek(cards, 0, count, cardId);
    return i < count && cards[i] === cardId ? scores[i]! : 0;
  }

  async part(node: QueryNode, cardId: number): Promise<ScorePart> {
    switch (node.kind) {
      case 'word':
        return this.word(node, cardId);
      case 'phrase': {
        const score = await this.scoreOf(node, cardId);
        const words = await Promise.all(node.words.map((_, at) => this.word(node, cardId, at)));
        const bonus = PHRASE_BONUS * (node.words.length - 1) + (node.words.some(hasAccents) ? ACCENT_BONUS : 0);
        return { node: label(node), score, ...(score > 0 ? { bonus } : {}), parts: words };
      }
      case 'near': {
        const score = await this.scoreOf(node, cardId);
        const parts = [await this.part(node.left, cardId), await this.part(node.right, cardId)];
        return { node: label(node), score, bonus: Math.max(0, Math.min(NEAR_BONUS, score - parts[0]!.score - parts[1]!.score)), parts };
      }
      case 'and':
      case 'or': {
        const score = node.kind === 'and' ? await this.scoreOf(node, cardId) : 0;
        const parts = await Promise.all(node.children.map((child) => this.part(child, cardId)));
        const sum = parts.reduce((n, p) => n + p.score, 0);
        return node.kind === 'and' ? { node: label(node), score, bonus: score - sum, parts } : { node: label(node), score: sum, parts };
      }
      default:
        return { node: label(node), score: 0 };
    }
  }

  /** A word (or the `at`-th word of a phrase) in the card: its forms there, the closest one's factor, and its score's parts. */
  private async word(node: TermNode, cardId: number, at = 0): Promise<ScorePart> {
    const word = node.kind === 'word' ? node.word : node.words[at]!;
    const name = node.kind === 'word' ? label(node) : word.exact;
    const occurrences = await this.evaluation.occurrences(node, at);
    const i = seek(occurrences.cards, 0, occurrences.count, cardId);
    if (i >= occurrences.count || occurrences.cards[i] !== cardId) return { node: name, score: 0 };
    const refs = occurrences.refs;
    refs.load(i);
    const { keys, from, to } = refs;
    const { norms, length } = this.version.columns;
    const parts: OccurrenceParts = { tf: 0, bm25f: 0, metas: 0, anchors: 0 };
    occurrenceScore(keys, from, to, norms[length[cardId]!]!, occurrences.idf, parts);
    const fields: Record<string, number> = {};
    for (let j = from; j < to; j++) {
      const ref = keys[j]!;
      const field = (ref & PACKED_META) === 0 ? 'body' : FIELD_NAMES[(ref >> 2) & 15]!;
      fields[field] = (fields[field] ?? 0) + 1;
    }
    // The forms of the word the card has, and the closest of them.
    const { entries, kinds } = this.evaluation.entries(node, at);
    const forms: Array<{ word: string; match: FormMatch }> = [];
    let closest: number = FORM.synonymStem;
    for (let e = 0; e < entries.length; e++) {
      const chains = this.version.postings(entries[e]!);
      const k = seek(chains.cards, 0, chains.count, cardId);
      if (k >= chains.count || chains.cards[k] !== cardId) continue;
      const kind = kinds[e]!;
      closest = Math.min(closest, kind);
      forms.push({ word: entries[e]!.word, match: kind === FORM.word ? (entries[e]!.word === word.exact ? 'exact' : 'accent') : MATCH_NAMES[kind]! });
    }
    const score = node.kind === 'word' ? await this.scoreOf(node, cardId) : occurrences.scores[i]!;
    const accent = node.kind === 'word' && !node.prefix && hasAccents(word) && occurrences.exact[i] === 1 ? ACCENT_BONUS : 0;
    const match = forms.find((form) => form.match === 'exact')?.match ?? forms[0]?.match ?? 'exact';
    return {
      node: name,
      score,
      match,
      factor: FORM_FACTORS[closest]!,
      idf: occurrences.idf,
      tf: parts.tf,
      bm25f: parts.bm25f,
      metas: parts.metas,
      anchors: parts.anchors,
      fields,
      forms,
      ...(accent > 0 ? { bonus: accent } : {}),
    };
  }
}

/** An explanation as indented lines of text (`sherlock search --explain`). */
export function explanationLines(e: Explanation): string[] {
  const n = (x: number) => String(Math.round(x * 100) / 100);
  const lines = [`score ${n(e.score)} = (${n(e.query.score)} + 1) × ${n(e.factor)} (static weight ${e.weight})`];
  const walk = (part: ScorePart, depth: number): void => {
    const bonus = part.bonus === undefined ? '' : ` (bonus ${n(part.bonus)})`;
    let line = `${'  '.repeat(depth)}${part.node} ${n(part.score)}${bonus}`;
    if (part.match !== undefined) {
      const fields = Object.entries(part.fields ?? {}).map(([field, count]) => `${field} ${count}`).join(', ');
      const forms = (part.forms ?? []).map((form) => `${form.word} (${form.match})`).join(', ');
      line += `: ${part.match} × ${n(part.factor!)}, idf ${n(part.idf!)} × ${n(part.bm25f!)} (tf ${n(part.tf!)}, metas ${n(part.metas!)}, anchors ${n(part.anchors!)}); ${fields}; forms ${forms}`;
    }
    lines.push(line);
    for (const child of part.parts ?? []) walk(child, depth + 1);
  };
  walk(e.query, 1);
  return lines;
}
