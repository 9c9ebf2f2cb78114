/**
 * The sample sites `sherlock demo` crawls: what the four generators (wiki.ts,
 * recipes.ts, docs.ts, news.ts) share. A site is a map from path (with its
 * query) to a finished response; nothing is downloaded or shipped but the
 * generators' code and word lists. The same origins give the same bytes:
 * choices come from Rng, seeded by a page's own key, never from the clock.
 *
 * The pages link to each other's sites, so every generator gets the origins
 * of all four (they are known only once the servers have bound their ports).
 */

export const SITE_KEYS = ['wiki', 'recipes', 'docs', 'news'] as const;
export type SiteKey = (typeof SITE_KEYS)[number];
export type Origins = Record<SiteKey, string>;

export interface Page {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Site {
  key: SiteKey;
  /** What a person calls it ("Lindenau Wiki"). */
  name: string;
  pages: Map<string, Page>;
}

/** xorshift32 seeded by an FNV-1a hash of a string: the same key, the same choices. */
export class Rng {
  private state: number;

  constructor(key: string) {
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    this.state = h >>> 0 || 1;
  }

  /** A number in [0, 1). */
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x1_0000_0000;
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)]!;
  }

  /** `n` different items of `list`, in the list's order. */
  some<T>(list: readonly T[], n: number): T[] {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(n, list.length)) chosen.add(Math.floor(this.next() * list.length));
    return [...chosen].sort((a, b) => a - b).map((i) => list[i]!);
  }
}

/** "Crème brûlée & co." → "creme-brulee-co": the ASCII path segment of a title. */
export function slug(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .replace(/œ/g, 'oe')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** Fills `{name}` slots of a template from `values`. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? `{${name}}`));
}

export interface Layout {
  site: string;
  title: string;
  lang?: string;
  description?: string;
  /** The site's navigation links, as HTML; in the footer, so that a page's text starts with its own words. */
  nav: string;
  main: string;
  footer?: string;
}

/** A whole HTML document in the sites' common layout; titles read "Page – Site". */
export function layout(page: Layout): string {
  const description = page.description === undefined ? '' : `\n<meta name="description" content="${page.description}">`;
  return `<!doctype html>
<html lang="${page.lang ?? 'en'}">
<head>
<meta charset="utf-8">
<title>${page.title} – ${page.site}</title>${description}
</head>
<body>
<header><a href="/">${page.site}</a></header>
<main>
${page.main}
</main>
<footer><nav>${page.nav}</nav> ${page.footer ?? `© ${page.site}. Text available under a free licence.`}</footer>
</body>
</html>
`;
}

export function html(body: string, modified?: Date): Page {
  const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' };
  if (modified !== undefined) headers['last-modified'] = modified.toUTCString();
  return { status: 200, headers, body };
}

export function text(body: string, type = 'text/plain; charset=utf-8'): Page {
  return { status: 200, headers: { 'content-type': type }, body };
}

export function redirect(location: string): Page {
  return { status: 301, headers: { location, 'content-type': 'text/html; charset=utf-8' }, body: `<a href="${location}">Moved</a>\n` };
}

export function link(href: string, label: string): string {
  return `<a href="${href}">${label}</a>`;
}

export function list(items: readonly string[]): string {
  return `<ul>\n${items.map((item) => `<li>${item}</li>`).join('\n')}\n</ul>`;
}
