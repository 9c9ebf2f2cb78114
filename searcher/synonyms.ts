/**
 * Synonyms: the operator's list (searcher.synonyms_file), in the format of
 * Solr's synonym files, applied to each query before it is evaluated.
 *
 *   # a comment line; blank lines are skipped
 *   couch, sofa, settee        each term finds the others (and itself)
 *   usa, united states         a term may be several words
 *   colour, grey => color, gray   each term on the left also finds each on the right
 *
 * A term is cut into words as the indexed text is (common/words.ts) and
 * compared by plain form, so "cafe" in the file or the query is "café"
 * too. A backslash takes the next character as it is (`\,` a comma in a
 * term). The typed word always finds itself as well: `=>` adds, it does
 * not replace. Lines naming the same term add up.
 *
 * In a query (apply): a one-word synonym joins the forms of the word it
 * stands for (evaluate.ts: its cards rank behind the word's own and its
 * stem variants', rank.ts SYNONYM_FACTOR); a several-word one is a phrase
 * beside the word, the phrase or the run of plain words it stands for
 * (an OR). Words typed `=exact`, prefixes and words of a NEAR take one-word
 * synonyms only, or none. At most MAX_SYNONYMS synonyms per term are
 * used, the first in the file.
 *
 * A file that breaks a rule is refused whole with file:line and what is
 * wrong (SynonymsError); the searcher keeps the list it had (cli/searcher.ts).
 */

import { readFileSync, statSync } from 'node:fs';
import { SherlockError } from '../common/errors.js';
import { words } from '../common/words.js';
import type { QueryNode, QueryWord, TermNode } from './query.js';

/** Synonyms a term brings into a query, at most. */
export const MAX_SYNONYMS = 16;
/** Words in one term of the file. */
export const MAX_TERM_WORDS = 8;
/** Bytes of a synonyms file. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
const MAX_LINE_CHARS = 4096;

/** A synonyms file that breaks a rule: where, and what. */
export class SynonymsError extends SherlockError {
  /** `line` 0: the file as a whole. */
  constructor(file: string, line: number, message: string) {
    super('SHERLOCK_BAD_CONFIG', `${line === 0 ? file : `${file}:${line}`}: ${message}`, { key: 'searcher.synonyms_file' });
    this.name = 'SynonymsError';
  }
}

/** The terms of one side of a line: split at commas not escaped, unescaped, trimmed. */
function terms(side: string): string[] {
  const out: string[] = [];
  let term = '';
  for (let i = 0; i < side.length; i++) {
    const c = side[i]!;
    if (c === '\\' && i + 1 < side.length) term += side[++i];
    else if (c === ',') {
      out.push(term.trim());
      term = '';
    } else term += c;
  }
  out.push(term.trim());
  return out;
}

/** The place of the one unescaped "=>" of a line, −1 for none; −2 for more than one. */
function arrow(line: string): number {
  let at = -1;
  for (let i = 0; i < line.length - 1; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === '=' && line[i + 1] === '>') {
      if (at >= 0) return -2;
      at = i;
    }
  }
  return at;
}

const keyOf = (term: readonly QueryWord[]): string => term.map((word) => word.plain).join(' ');

export class Synonyms {
  /** By a term's key (its plain forms), the terms it also finds. */
  private readonly map = new Map<string, QueryWord[][]>();
  /** Words of the longest term on a left side: the longest run apply() looks for. */
  private longest = 0;

  /** An empty list (no file configured). */
  static readonly NONE = new Synonyms();

  /** The number of terms that have synonyms. */
  get size(): number {
    return this.map.size;
  }

  /** Reads and parses `file`; a missing, unreadable or broken file is a SynonymsError. */
  static load(file: string): Synonyms {
    let text: string;
    try {
      const size = statSync(file).size;
      if (size > MAX_FILE_BYTES) throw new SynonymsError(file, 0, `the file has ${size} bytes, more than the ${MAX_FILE_BYTES} a synonyms file may have`);
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if (err instanceof SynonymsError) throw err;
      throw new SynonymsError(file, 0, `cannot read it: ${(err as Error).message}`);
    }
    return Synonyms.parse(text, file);
  }

  /** Parses the text of a synonyms file; `file` names it in errors. */
  static parse(text: string, file: string): Synonyms {
    const synonyms = new Synonyms();
    const lines = text.split('\n');
    for (let n = 0; n < lines.length; n++) {
      const line = lines[n]!.replace(/\r$/, '');
      const trimmed = line.trim();
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      const fail = (message: string): never => {
        throw new SynonymsError(file, n + 1, message);
      };
      if (line.length > MAX_LINE_CHARS) fail(`the line has ${line.length} characters, more than ${MAX_LINE_CHARS}`);
      const at = arrow(line);
      if (at === -2) fail('a line has at most one "=>"');
      const parse = (side: string): QueryWord[][] =>
        terms(side).map((term) => {
          if (term === '') fail('an empty term (two commas in a row, or a comma or "=>" at an end)');
          const found = [...words(term)];
          if (found.length === 0) fail(`${JSON.stringify(term.slice(0, 40))} has no letters or digits`);
          if (found.length > MAX_TERM_WORDS) fail(`${JSON.stringify(term.slice(0, 40))} has ${found.length} words, more than ${MAX_TERM_WORDS}`);
          return found.map((w) => ({ exact: w.exact, plain: w.plain }));
        });
      if (at < 0) {
        const group = parse(line);
        if (group.length < 2) fail('one term alone says nothing: list its synonyms after commas, or after "=>"');
        for (const term of group) synonyms.add(term, group);
      } else {
        const left = parse(line.slice(0, at));
        const right = parse(line.slice(at + 2));
        for (const term of left) synonyms.add(term, right);
      }
    }
    return synonyms;
  }

  private add(term: QueryWord[], others: readonly QueryWord[][]): void {
    const key = keyOf(term);
    const list = this.map.get(key) ?? [];
    for (const other of others) {
      const otherKey = keyOf(other);
      if (otherKey !== key && !list.some((known) => keyOf(known) === otherKey)) list.push(other);
    }
    if (list.length === 0) return;
    this.map.set(key, list);
    this.longest = Math.max(this.longest, term.length);
  }

  /** The terms `term` also finds, at most MAX_SYNONYMS. */
  of(term: readonly QueryWord[]): readonly QueryWord[][] {
    return (this.map.get(keyOf(term)) ?? []).slice(0, MAX_SYNONYMS);
  }

  /** The query with the synonyms of its words, phrases and runs of plain words put in (see the module comment). */
  apply(node: QueryNode): QueryNode {
    if (this.map.size === 0) return node;
    switch (node.kind) {
      case 'word':
        return this.word(node);
      case 'phrase':
        return this.phrase(node);
      case 'near':
        return { ...node, left: this.oneWord(node.left), right: this.oneWord(node.right) };
      case 'not':
        return { ...node, child: this.apply(node.child) };
      case 'or':
        return { ...node, children: node.children.map((child) => this.apply(child)) };
      case 'and':
        return { ...node, children: this.runs(node.children) };
      default:
        return node;
    }
  }

  /** A term with its one-word synonyms, when it is a word that takes them. */
  private oneWord(node: TermNode): TermNode {
    if (node.kind !== 'word' || node.prefix || node.exact === true || node.synonym === true) return node;
    const single = this.of([node.word]).filter((term) => term.length === 1);
    return single.length === 0 ? node : { ...node, synonyms: single.map((term) => term[0]!) };
  }

  private word(node: Extract<QueryNode, { kind: 'word' }>): QueryNode {
    const word = this.oneWord(node);
    if (node.prefix || node.exact === true || node.synonym === true) return word;
    const phrases = this.of([node.word]).filter((term) => term.length > 1);
    return phrases.length === 0 ? word : { kind: 'or', children: [word, ...phrases.map((term) => this.alternative(term, node))] };
  }

  private phrase(node: Extract<QueryNode, { kind: 'phrase' }>): QueryNode {
    if (node.exact === true || node.synonym === true) return node;
    const others = this.of(node.words);
    return others.length === 0 ? node : { kind: 'or', children: [node, ...others.map((term) => this.alternative(term, node))] };
  }

  /** A synonym term as a node in the place (span, field) of what it stands for. */
  private alternative(term: readonly QueryWord[], of: { start: number; end: number; field?: TermNode['field'] }): TermNode {
    const place = { start: of.start, end: of.end, synonym: true as const, ...(of.field === undefined ? {} : { field: of.field }) };
    return term.length === 1 ? { kind: 'word', word: term[0]!, prefix: false, ...place } : { kind: 'phrase', words: [...term], ...place };
  }

  /** An AND's children, each with its synonyms, and each run of plain words that is a term of several words beside its synonyms. */
  private runs(children: readonly QueryNode[]): QueryNode[] {
    const out: QueryNode[] = [];
    const plain = (node: QueryNode | undefined): node is Extract<QueryNode, { kind: 'word' }> =>
      node?.kind === 'word' && !node.prefix && node.exact !== true && node.field === undefined && node.synonym !== true;
    for (let i = 0; i < children.length; ) {
      let matched = 0;
      let others: readonly QueryWord[][] = [];
      for (let n = Math.min(this.longest, children.length - i); n >= 2 && matched === 0; n--) {
        const run = children.slice(i, i + n);
        if (!run.every(plain)) continue;
        others = this.of(run.map((node) => node.word));
        if (others.length > 0) matched = n;
      }
      if (matched === 0) {
        out.push(this.apply(children[i]!));
        i += 1;
        continue;
      }
      const run = children.slice(i, i + matched) as Array<Extract<QueryNode, { kind: 'word' }>>;
      const span = { start: run[0]!.start, end: run[run.length - 1]!.end };
      out.push({ kind: 'or', children: [{ kind: 'and', children: run.map((node) => this.apply(node)) }, ...others.map((term) => this.alternative(term, span))] });
      i += matched;
    }
    return out;
  }
}
