/**
 * The Czech collection of the relevance table and its judgments.
 *
 * Collection: Debian's Czech documentation, served on its own loopback
 * hosts the way the bench serves every set (site.ts, site-server.ts):
 *
 *   aptitude-doc-cs  /usr/share/doc/aptitude/html/cs (DocBook chunks)
 *   debian-handbook  /usr/share/doc/debian-handbook/html/cs-CZ (the Czech
 *                    translation; partly still English)
 *   gimp-help-cs     /usr/share/gimp/2.0/help/cs (DocBook; partly English);
 *                    its index page Disallowed, as the English sets' are
 *   manpages-cs      /usr/share/man/cs, rendered here with groff (-Tutf8)
 *                    into one HTML page each (`<pre>`), "name(n)" mentions
 *                    linked, plus an index page (bench/work/czech-man/)
 *
 * Judgments (`czech.tsv`), mechanical, never chosen by looking at results.
 * A query is `queryWords` (judgments.ts) of a text, words with a letter
 * only, kept when it has 1–MAX_WORDS words, at least one letter of Czech's
 * own (á č ď é ě í ň ó ř š ť ú ů ý ž: English texts of the half-translated
 * manuals are not Czech queries), and passes the stemmer-neutral test of
 * another inflected form against its relevant page: one query word of
 * PREFIX letters or more is not in that page's text in that exact form, but
 * a different word of the page starts with the same PREFIX letters
 * ("správou balíků" → a page with "správa", "balíky"). Two sources:
 *
 * - link texts: every `<a href>` of a page to another page of the same tree
 *   with its visible text, navigation left out (DocBook's previous/next/up/
 *   home links carry an `accesskey`); relevant = the target page. The pages
 *   those links are on are held out: Disallowed in the Czech site's
 *   robots.txt (`czech-held-out.txt`), so no engine indexes them. The link
 *   text is otherwise an anchor text pointing at the judged page, which
 *   sherlock indexes (docs/search.md) and the peers do not: it would find
 *   the page by the very words typed, and morphology would not be
 *   measured. A (query, target) is kept only when every page with that link
 *   can be held out (not a host's entry page) and the target is not held
 *   out itself;
 * - index terms: gimp-help-cs's back-of-book index, read as the English
 *   ones are (back-of-book.ts: a sub-entry after its parent, qualifiers
 *   dropped, at most MAX_PAGES pages); kept when every page it points to
 *   passes the test.
 *
 * One query's relevant pages from both sources are merged.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Parser } from 'htmlparser2';
import { htmlFiles, hostAddress, PACKAGES, packageVersion } from '../corpus.js';
import { extractPage, squash } from '../extract.js';
import { hostUrl, isSitePage, ownerOf } from '../site.js';
import type { HostSpec, SiteLayout } from '../site.js';
import { collectionPages, MAX_PAGES, parseDocBookIndex, withoutQualifiers } from './back-of-book.js';
import { queryWords } from './judgments.js';
import type { Judgment } from './judgments.js';

export const MAX_WORDS = 6;
export const PREFIX = 4;
const CZECH_LETTER = /[áčďéěíňóřšťúůýž]/u;

/** Debian packages of the Czech collection (groff-base renders the man pages). */
export const CZECH_PACKAGES = ['aptitude-doc-cs', 'debian-handbook', 'gimp-help-cs', 'manpages-cs', 'groff-base'] as const;

/** The Czech hosts, after every host of corpus.ts, so no address is shared with a set's. */
export function czechLayout(port: number, manRoot: string, heldOut: readonly string[]): SiteLayout {
  const first = PACKAGES.reduce((n, p) => n + p.hosts.length, 0);
  const plans = [
    { name: 'aptitude-cs', pkg: 'aptitude-doc-cs', root: '/usr/share/doc/aptitude/html/cs', disallow: [] as string[] },
    { name: 'debian-handbook-cs', pkg: 'debian-handbook', root: '/usr/share/doc/debian-handbook/html/cs-CZ', disallow: ['/Common_Content/'] },
    { name: 'gimp-help-cs', pkg: 'gimp-help-cs', root: '/usr/share/gimp/2.0/help/cs', disallow: CZECH_INDEXES.map((i) => i.index) as string[] },
    { name: 'manpages-cs', pkg: 'manpages-cs', root: manRoot, disallow: [] as string[] },
  ];
  const hosts: HostSpec[] = plans.map((p, i) => ({
    name: p.name,
    address: hostAddress(first + i),
    pkg: p.pkg,
    root: p.root,
    owns: [],
    entry: '/index.html',
    disallow: [...p.disallow, ...heldOut.filter((h) => h.startsWith(p.pkg + ':')).map((h) => h.slice(p.pkg.length + 1))],
    behaviour: 'normal',
  }));
  return { port, hosts };
}

// ------------------------------------------------------------ man pages

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * Renders manpages-cs into `dir` (`/man1/cp.1.html` …, `/index.html`) unless
 * it holds a rendering of the same package and groff versions. Each page is
 * groff's plain UTF-8 rendering in a `<pre>`, its title "name(section)" and
 * the NAME line; a mention "name(n)" of another rendered page links to it.
 */
export function renderManPages(dir: string, log: (line: string) => void): void {
  const key = `manpages-cs ${packageVersion('manpages-cs')}, groff-base ${packageVersion('groff-base')}`;
  const stamp = join(dir, 'rendered-from.txt');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === key) return;
  const files = spawnSync('dpkg', ['-L', 'manpages-cs'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((f) => /^\/usr\/share\/man\/cs\/man\d\/[^/]+\.\d\w*\.gz$/.test(f))
    .sort();
  if (files.length === 0) throw new Error('manpages-cs: no man pages (is the package installed?)');
  const tmp = dir + '.tmp';
  rmSync(tmp, { recursive: true, force: true });
  const pages = new Map<string, { path: string; title: string; text: string }>(); // "cp(1)" → page
  for (const f of files) {
    const m = /man(\d)\/([^/]+)\.(\d\w*)\.gz$/.exec(f)!;
    const r = spawnSync('groff', ['-k', '-Kutf-8', '-mandoc', '-Tutf8', '-P-cbou'], { input: gunzipSync(readFileSync(f)), encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } });
    if (r.status !== 0) throw new Error(`groff failed on ${f}: ${r.stderr.trim().split('\n')[0] ?? ''}`);
    const text = r.stdout.replace(/\n{3,}/g, '\n\n');
    const nameLine = /\n(?:JMÉNO|NAME|NÁZEV)\s*\n\s*(.+)/.exec(text)?.[1]?.trim() ?? '';
    pages.set(`${m[2]}(${m[3]})`, { path: `/man${m[1]}/${m[2]}.${m[3]}.html`, title: `${m[2]}(${m[3]})${nameLine === '' ? '' : ' — ' + nameLine}`, text });
  }
  for (const page of pages.values()) {
    // Mentions such as "ls(1)" become links to the page rendered for them.
    const body = escapeHtml(page.text).replace(/\b([\w.+-]+)\((\d\w*)\)/g, (whole, name: string, section: string) => {
      const target = pages.get(`${name}(${section})`);
      return target === undefined || target === page ? whole : `<a href="${posix.relative(posix.dirname(page.path), target.path)}">${whole}</a>`;
    });
    const file = join(tmp, page.path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, `<!DOCTYPE html>\n<html lang="cs"><head><meta charset="utf-8"><title>${escapeHtml(page.title)}</title></head>\n<body><pre>${body}</pre></body></html>\n`);
  }
  const items = [...pages.values()].map((p) => `<li><a href="${p.path.slice(1)}">${escapeHtml(p.title)}</a></li>`);
  writeFileSync(join(tmp, 'index.html'), `<!DOCTYPE html>\n<html lang="cs"><head><meta charset="utf-8"><title>Manuálové stránky</title></head>\n<body><h1>Manuálové stránky</h1><ul>\n${items.join('\n')}\n</ul></body></html>\n`);
  writeFileSync(join(tmp, 'rendered-from.txt'), key);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  log(`rendered ${pages.size} Czech man pages into ${dir}`);
}

// ------------------------------------------------------------ judgments

/** Links of one page with their visible text; navigation (an `accesskey`) left out. */
export function linkTexts(html: string): Array<{ href: string; text: string }> {
  const out: Array<{ href: string; text: string }> = [];
  let open: { href: string; text: string } | undefined;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'a' && attribs['href'] !== undefined && attribs['accesskey'] === undefined) open = { href: attribs['href'], text: '' };
      },
      ontext(data) {
        if (open !== undefined) open.text += data;
      },
      onclosetag(name) {
        if (name === 'a' && open !== undefined) {
          out.push({ href: open.href, text: squash(open.text) });
          open = undefined;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return out;
}

/** True when some query word is, in the target's words, only in other forms sharing its first PREFIX letters. */
export function otherFormOnly(query: readonly string[], targetWords: ReadonlySet<string>): boolean {
  return query.some((w) => {
    if ([...w].length < PREFIX || targetWords.has(w)) return false;
    const stem = [...w].slice(0, PREFIX).join('');
    for (const v of targetWords) if (v !== w && v.startsWith(stem)) return true;
    return false;
  });
}

interface Candidate {
  query: string;
  target: string;
  source: string;
}

/** The back-of-book indexes of the Czech collection (Disallowed on its site, as the English ones are on theirs). */
export const CZECH_INDEXES = [{ pkg: 'gimp-help-cs', index: '/gimp-help-index.html' }] as const;

/** A link text's or an index term's words as a Czech query, or undefined when it is none (no letter of Czech's own, too long). */
function czechQuery(text: string): string[] | undefined {
  const words = queryWords(text).filter((w) => /\p{L}/u.test(w));
  return words.length === 0 || words.length > MAX_WORDS || !CZECH_LETTER.test(words.join(' ')) ? undefined : words;
}

/**
 * The Czech judgments and the pages held out, from the collection's files
 * (the layout with nothing held out yet).
 */
export function deriveCzech(layout: SiteLayout): { judgments: Judgment[]; heldOut: string[]; header: string[] } {
  const candidates: Candidate[] = [];
  const entries = new Set<string>();
  const wordsOf = new Map<string, Set<string>>();
  /** The words of a page of the collection (`package:/path`), as the extraction gives its title and text. */
  const pageWords = (host: HostSpec, path: string): Set<string> => {
    const key = `${host.pkg}:${path}`;
    let set = wordsOf.get(key);
    if (set === undefined) {
      const page = extractPage(readFileSync(join(host.root, path), 'utf8'), hostUrl(layout, host.address, path));
      set = new Set(queryWords(page.title + ' ' + page.text));
      wordsOf.set(key, set);
    }
    return set;
  };
  let links = 0;
  for (const host of layout.hosts) {
    entries.add(`${host.pkg}:${host.entry}`);
    const paths = htmlFiles(host.root).filter((p) => isSitePage(layout, host, p));
    const inSite = new Set(paths);
    for (const source of paths) {
      for (const link of linkTexts(readFileSync(join(host.root, source), 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link.href) || link.href.startsWith('#')) continue;
        const target = posix.normalize(posix.join(posix.dirname(source), link.href.split('#')[0]!.split('?')[0]!));
        if (target === source || !inSite.has(target) || ownerOf(layout, host.root, target) !== host) continue;
        links++;
        const words = czechQuery(link.text);
        if (words === undefined || !otherFormOnly(words, pageWords(host, target))) continue;
        candidates.push({ query: words.join(' '), target: `${host.pkg}:${target}`, source: `${host.pkg}:${source}` });
      }
    }
  }
  const sources = new Set(candidates.map((c) => c.source).filter((s) => !entries.has(s)));
  const pair = (c: Candidate): string => `${c.query}\t${c.target}`;
  const leaks = new Set(candidates.filter((c) => !sources.has(c.source) || sources.has(c.target)).map(pair));
  const kept = candidates.filter((c) => !leaks.has(pair(c)));
  const heldOut = [...new Set(kept.map((c) => c.source))].sort();
  const byQuery = new Map<string, Set<string>>();
  for (const c of kept) byQuery.set(c.query, (byQuery.get(c.query) ?? new Set()).add(c.target));
  const fromLinks = byQuery.size;
  // Second source: index terms, kept when every page they point to has one of their words only in other forms.
  let terms = 0;
  let indexed = 0;
  for (const ix of CZECH_INDEXES) {
    const host = layout.hosts.find((h) => h.pkg === ix.pkg)!;
    const resolve = collectionPages(layout, ix.pkg, ix.index);
    for (const e of parseDocBookIndex(readFileSync(join(host.root, ix.index), 'utf8'))) {
      terms++;
      const words = czechQuery(e.terms.map(withoutQualifiers).join(' '));
      const pages = [...new Set(e.hrefs.map(resolve).filter((p): p is string => p !== undefined && !heldOut.includes(p)))];
      if (words === undefined || pages.length === 0 || pages.length > MAX_PAGES) continue;
      if (!pages.every((p) => otherFormOnly(words, pageWords(host, p.slice(ix.pkg.length + 1))))) continue;
      indexed++;
      const set = byQuery.get(words.join(' ')) ?? new Set<string>();
      for (const p of pages) set.add(p);
      byQuery.set(words.join(' '), set);
    }
  }
  const judgments = [...byQuery]
    .map(([query, targets]) => ({ query, relevant: [...targets].sort() }))
    .sort((a, b) => (a.query < b.query ? -1 : a.query > b.query ? 1 : 0));
  const versions = layout.hosts.map((h) => `${h.pkg} ${packageVersion(h.pkg)}`).join(', ');
  return {
    judgments,
    heldOut,
    header: [
      `Czech relevance judgments from Debian's Czech documentation (${versions}; man pages rendered by groff-base ${packageVersion('groff-base')}).`,
      `Derived by bench/relevance/czech.ts, never edited by hand. A query: 1-${MAX_WORDS} words with a Czech letter, one of ${PREFIX}+ letters that the relevant page has only in other forms (same first ${PREFIX} letters).`,
      `Link texts: of ${links} links between pages (navigation left out), ${candidates.length} qualify; ${fromLinks} queries; the ${heldOut.length} pages carrying them are held out of the collection (czech-held-out.txt).`,
      `Index terms: of ${terms} entries of ${CZECH_INDEXES.map((i) => i.pkg + i.index).join(', ')}, ${indexed} qualify for every page they point to (at most ${MAX_PAGES}). ${judgments.length} queries in all. Format: query TAB package:/path TAB …`,
    ],
  };
}

/** The held-out list's file format: '#' comments, one `package:/path` a line. */
export function parseHeldOut(text: string): string[] {
  return text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

export function manRootOf(workRoot: string): string {
  return join(workRoot, 'czech-man');
}
