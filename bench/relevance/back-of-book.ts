/**
 * English judgments from back-of-book indexes: an editor chose, for each
 * index term, the pages it points to. Two indexes of the medium set:
 *
 *   python3.11-doc     genindex-all.html (Sphinx's general index; the crawl
 *                      disallows /genindex-, so no engine sees it)
 *   postgresql-doc-15  bookindex.html (DocBook's index; disallowed too)
 *
 * (debian-handbook, the second choice, ships no index text: its
 * index terms are 1,350 empty `<a class="indexterm">` anchors.)
 *
 * Method, mechanical only:
 * - an entry is a term with the pages it links to; a sub-entry's query is
 *   its parent's term, a space, its own ("aggregate function built-in");
 * - qualifiers in parentheses are dropped ("(in module os)", "(class in
 *   ctypes)", "(see …)", "()"), then the words are taken as `queryWords`
 *   says (judgments.ts); a sub-entry that was only a qualifier ("(in module
 *   importlib.util)") adds its pages to its parent's query;
 * - a page is a link's file with the fragment dropped, kept when it is a
 *   page of the bench's site (site.ts isSitePage: served, not disallowed,
 *   not one of the deterministic 404s); "[1]", "[2]" … links of the same
 *   entry count as the entry's pages;
 * - entries with the same query are merged; a query is dropped when it has
 *   no word of 3 characters or more, or no page, or more than MAX_PAGES
 *   pages (a term that everything is about judges nothing);
 * - SAMPLE queries are kept: those with the smallest FNV-1a hash of the
 *   query (site.ts fnv1a), written in alphabetical order.
 */

import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { Parser } from 'htmlparser2';
import { fnv1a, isSitePage, ownerOf } from '../site.js';
import type { SiteLayout } from '../site.js';
import { queryWords } from './judgments.js';
import type { Judgment } from './judgments.js';

export const MAX_PAGES = 5;
export const SAMPLE = 500;

/** One line of an index: its own term, its parent's (for a sub-entry), and the link targets as written. */
export interface IndexEntry {
  readonly terms: readonly string[];
  readonly hrefs: readonly string[];
}

interface Open {
  text: string;
  hrefs: string[];
  parent: Open | undefined;
}

function termsOf(e: Open): string[] {
  const out: string[] = [];
  for (let x: Open | undefined = e; x !== undefined; x = x.parent) out.unshift(x.text.replace(/\s+/g, ' ').trim());
  return out;
}

/**
 * Sphinx's genindex: `table.indextable` of nested `<li>`; an entry's term is
 * its text outside nested lists, less the "[1]", "[2]" … of its further links.
 */
export function parseSphinxIndex(html: string): IndexEntry[] {
  const out: IndexEntry[] = [];
  let inTable = 0;
  let top: Open | undefined;
  let inLink = false;
  let linkText = '';
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'table' && (attribs['class'] ?? '').split(' ').includes('indextable')) inTable++;
        if (inTable === 0) return;
        if (name === 'li') top = { text: '', hrefs: [], parent: top };
        else if (name === 'a' && top !== undefined) {
          if (attribs['href'] !== undefined) top.hrefs.push(attribs['href']);
          inLink = true;
          linkText = '';
        }
      },
      ontext(data) {
        if (inTable === 0 || top === undefined) return;
        if (inLink) linkText += data;
        else top.text += data;
      },
      onclosetag(name) {
        if (inTable === 0) return;
        if (name === 'table') inTable--;
        else if (name === 'a' && inLink && top !== undefined) {
          inLink = false;
          if (!/^\s*\[\d+\]\s*$/.test(linkText)) top.text += linkText;
        } else if (name === 'li' && top !== undefined) {
          out.push({ terms: termsOf(top), hrefs: top.hrefs });
          top = top.parent;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return out;
}

/**
 * DocBook's bookindex: `<dt>term, <a class="indexterm">section title</a>…</dt>`,
 * sub-entries in the `<dd><dl>` after it; the term is the `<dt>`'s text outside links.
 */
export function parseDocBookIndex(html: string): IndexEntry[] {
  const out: IndexEntry[] = [];
  let last: Open | undefined; // the latest <dt>, parent of the <dl> in the <dd> after it
  const parents: Array<Open | undefined> = [];
  let dt: Open | undefined;
  let inLink = 0;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'dd') parents.push(last);
        else if (name === 'dt') dt = { text: '', hrefs: [], parent: parents[parents.length - 1] };
        else if (name === 'a' && dt !== undefined) {
          inLink++;
          if (attribs['href'] !== undefined) dt.hrefs.push(attribs['href']);
        }
      },
      ontext(data) {
        if (dt !== undefined && inLink === 0) dt.text += data;
      },
      onclosetag(name) {
        if (name === 'a' && inLink > 0) inLink--;
        else if (name === 'dt' && dt !== undefined) {
          out.push({ terms: termsOf(dt), hrefs: dt.hrefs });
          last = dt;
          dt = undefined;
        } else if (name === 'dd') parents.pop();
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return out;
}

/** A term without its parenthesised qualifiers (nested ones too). */
export function withoutQualifiers(term: string): string {
  let t = term;
  for (let before = ''; before !== t; ) {
    before = t;
    t = t.replace(/\([^()]*\)/g, ' ');
  }
  return t;
}

/**
 * Judgments from index entries. `pageOf` turns a link target (as written in
 * the index file) into `package:/path` when it is a page of the collection,
 * else undefined.
 */
export function judgmentsFromIndex(entries: readonly IndexEntry[], pageOf: (href: string) => string | undefined, sample = SAMPLE): Judgment[] {
  const byQuery = new Map<string, Set<string>>();
  for (const e of entries) {
    const query = queryWords(e.terms.map(withoutQualifiers).join(' ')).join(' ');
    const pages = e.hrefs.map(pageOf).filter((p): p is string => p !== undefined);
    if (query === '' || pages.length === 0) continue;
    const set = byQuery.get(query) ?? new Set<string>();
    for (const p of pages) set.add(p);
    byQuery.set(query, set);
  }
  const kept = [...byQuery]
    .filter(([q, pages]) => q.split(' ').some((w) => w.length >= 3) && pages.size <= MAX_PAGES)
    .map(([query, pages]) => ({ query, relevant: [...pages].sort(), hash: fnv1a(query) }))
    .sort((a, b) => a.hash - b.hash || (a.query < b.query ? -1 : 1))
    .slice(0, sample);
  return kept.map(({ query, relevant }) => ({ query, relevant })).sort((a, b) => (a.query < b.query ? -1 : a.query > b.query ? 1 : 0));
}

/** The resolver of an index file's links: relative to `indexPath` in `pkg`'s document root, a page of `layout`'s site, or undefined. */
export function collectionPages(layout: SiteLayout, pkg: string, indexPath: string): (href: string) => string | undefined {
  const root = layout.hosts.find((h) => h.pkg === pkg)?.root;
  if (root === undefined) throw new Error(`${pkg} is not in the set's layout`);
  return (href) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#')) return undefined;
    const path = posix.normalize(posix.join(posix.dirname(indexPath), href.split('#')[0]!.split('?')[0]!));
    const owner = ownerOf(layout, root, path);
    if (owner === undefined || !isSitePage(layout, owner, path) || !existsSync(join(root, path))) return undefined;
    return `${pkg}:${path}`;
  };
}

/** The English sets: file name in bench/relevance/, package, index page, parser. */
export const ENGLISH_SETS = [
  { name: 'python-genindex', pkg: 'python3.11-doc', index: '/genindex-all.html', parse: parseSphinxIndex },
  { name: 'postgresql-bookindex', pkg: 'postgresql-doc-15', index: '/bookindex.html', parse: parseDocBookIndex },
] as const;

export function deriveEnglish(layout: SiteLayout, set: (typeof ENGLISH_SETS)[number], version: string): { judgments: Judgment[]; header: string[] } {
  const root = layout.hosts.find((h) => h.pkg === set.pkg)?.root;
  if (root === undefined) throw new Error(`${set.pkg} is not in the set's layout`);
  const entries = set.parse(readFileSync(join(root, set.index), 'utf8'));
  const judgments = judgmentsFromIndex(entries, collectionPages(layout, set.pkg, set.index));
  return {
    judgments,
    header: [
      `Relevance judgments: the back-of-book index of ${set.pkg} ${version} (${root}${set.index}), ${entries.length} entries.`,
      `Derived by bench/relevance/back-of-book.ts, never edited by hand: query = the term (a sub-entry after its parent's), qualifiers in parentheses dropped, lower-cased words;`,
      `pages = the entry's links without fragment that are pages of the bench's site; queries with more than ${MAX_PAGES} pages or no word of 3+ characters dropped;`,
      `the ${SAMPLE} with the smallest FNV-1a hash kept (${judgments.length} here). Format: query TAB package:/path TAB …`,
    ],
  };
}
