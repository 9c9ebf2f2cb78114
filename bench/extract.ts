/**
 * Extracted text of the corpus: one tag-stripping pass (htmlparser2) over every
 * page of the site, shared by every indexing and searching peer so they all
 * index exactly the same words.
 *
 * "A page of the site" is `isSitePage`: an HTML file its host owns, not
 * disallowed by robots.txt, not one of the deterministic 404/error paths. Each
 * page is read from disk with its links rewritten as the server would send it.
 *
 * Files written under the work directory (regenerated when the manifest —
 * set, package versions, layout, extractor version — changes):
 *   text.tsv    one page a line: id TAB url TAB title TAB text; tabs, newlines
 *               and runs of white space collapsed to one space
 *   links.txt   every distinct absolute http URL that the pages link to (<a href>)
 *   manifest.json  what the files were made from, and their counts
 */

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { Parser } from 'htmlparser2';
import { htmlFiles } from './corpus.js';
import { hostUrl, isSitePage, rewriteLinks } from './site.js';
import type { SiteLayout } from './site.js';

export const EXTRACTOR_VERSION = 3;

/** Elements whose content is not text a reader sees. */
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'head', 'select', 'textarea']);
/** Elements that separate words (a space is put at their edges). */
const BLOCK = new Set([
  'p', 'div', 'br', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'tr', 'td', 'th', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'pre', 'blockquote', 'section', 'article', 'header', 'footer', 'nav', 'aside', 'hr', 'figure', 'figcaption', 'caption',
  'body', 'html', 'main', 'form', 'fieldset', 'legend', 'address', 'details', 'summary', 'option', 'img',
]);

export interface ExtractedPage {
  title: string;
  text: string;
  links: string[];
}

/** Collapses white space (tabs and newlines included) to single spaces and trims. */
export function squash(text: string): string {
  return text.replace(/[\s\u00a0]+/g, ' ').trim();
}

/** Strips tags from one HTML page: visible text, title, and <a href> targets resolved against `base`. */
export function extractPage(html: string, base: string): ExtractedPage {
  const chunks: string[] = [];
  const title: string[] = [];
  const links: string[] = [];
  let skipDepth = 0;
  let inTitle = false;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'title') inTitle = true;
        else if (SKIP.has(name)) skipDepth++;
        else if (BLOCK.has(name)) chunks.push(' ');
        if (name === 'a' && attribs['href'] !== undefined) {
          try {
            const u = new URL(attribs['href'], base);
            if (u.protocol === 'http:') {
              u.hash = '';
              links.push(u.href);
            }
          } catch {
            // not a URL
          }
        }
      },
      ontext(data) {
        if (inTitle) title.push(data);
        else if (skipDepth === 0) chunks.push(data);
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        else if (SKIP.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        else if (BLOCK.has(name)) chunks.push(' ');
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return { title: squash(title.join('')), text: squash(chunks.join('')), links };
}

export interface CorpusFiles {
  dir: string;
  textFile: string;
  linksFile: string;
  pages: number;
  htmlBytes: number;
  textBytes: number;
  links: number;
}

interface Manifest {
  extractor: number;
  key: string;
  pages: number;
  htmlBytes: number;
  textBytes: number;
  links: number;
}

/**
 * Extracts the text of every page of the site into `dir`, unless the files
 * there were made from the same inputs (`key`: set, package versions, layout).
 */
export function extractCorpus(layout: SiteLayout, dir: string, key: string, log: (line: string) => void): CorpusFiles {
  mkdirSync(dir, { recursive: true });
  const textFile = join(dir, 'text.tsv');
  const linksFile = join(dir, 'links.txt');
  const manifestFile = join(dir, 'manifest.json');
  if (existsSync(manifestFile) && existsSync(textFile) && existsSync(linksFile)) {
    const m = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    if (m.extractor === EXTRACTOR_VERSION && m.key === key) {
      log(`extracted text up to date: ${m.pages} pages (${dir})`);
      return { dir, textFile, linksFile, pages: m.pages, htmlBytes: m.htmlBytes, textBytes: m.textBytes, links: m.links };
    }
  }
  const started = Date.now();
  const fd = openSync(textFile + '.tmp', 'w');
  const linkSet = new Set<string>();
  let pages = 0;
  let htmlBytes = 0;
  let textBytes = 0;
  let pending: string[] = [];
  let pendingLength = 0;
  const flush = (): void => {
    if (pending.length > 0) writeSync(fd, pending.join(''));
    pending = [];
    pendingLength = 0;
  };
  const decoder = new TextDecoder('utf-8');
  const roots = new Map<string, string[]>();
  for (const host of layout.hosts) {
    let files = roots.get(host.root);
    if (files === undefined) {
      files = htmlFiles(host.root);
      roots.set(host.root, files);
    }
    for (const path of files) {
      if (!isSitePage(layout, host, path)) continue;
      const raw = readFileSync(join(host.root, path));
      htmlBytes += raw.length;
      const html = rewriteLinks(layout, host, path, decoder.decode(raw));
      const url = hostUrl(layout, host.address, path);
      const page = extractPage(html, url);
      for (const l of page.links) linkSet.add(l);
      const line = `${pages}\t${url}\t${page.title}\t${page.text}\n`;
      textBytes += Buffer.byteLength(line);
      pending.push(line);
      pendingLength += line.length;
      pages++;
      if (pendingLength > 4_000_000) flush();
      if (pages % 5000 === 0) log(`  extracted ${pages} pages…`);
    }
  }
  flush();
  closeSync(fd);
  renameSync(textFile + '.tmp', textFile);
  writeFileSync(linksFile, [...linkSet].sort().join('\n') + '\n');
  const manifest: Manifest = { extractor: EXTRACTOR_VERSION, key, pages, htmlBytes, textBytes, links: linkSet.size };
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n');
  log(`extracted ${pages} pages, ${(htmlBytes / 1048576).toFixed(1)} MiB HTML → ${(textBytes / 1048576).toFixed(1)} MiB text in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { dir, textFile, linksFile, pages, htmlBytes, textBytes, links: linkSet.size };
}

/** Reads text.tsv line by line without holding it all (it can be hundreds of MiB). */
export function* readTextFile(file: string): Generator<{ id: number; url: string; title: string; text: string }> {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(8 << 20);
  const decoder = new StringDecoder('utf8');
  let rest = '';
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const lines = (rest + decoder.write(buf.subarray(0, n))).split('\n');
      rest = lines.pop()!;
      for (const line of lines) yield parseLine(line);
    }
    rest += decoder.end();
    if (rest !== '') yield parseLine(rest);
  } finally {
    closeSync(fd);
  }
}

function parseLine(line: string): { id: number; url: string; title: string; text: string } {
  const [id, url, title, text] = line.split('\t');
  return { id: Number(id), url: url ?? '', title: title ?? '', text: text ?? '' };
}
