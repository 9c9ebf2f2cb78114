/**
 * The Lindenau Gazette: a local news blog, one post a week through 2025 and
 * into 2026, each dated (Last-Modified) and linking to the wiki's articles
 * and the recipe site. Posts are listed newest first over numbered pages and
 * in monthly archives. One story was republished with an updated last
 * paragraph: a near duplicate of the original.
 */

import { fill, html, layout, link, list, Rng, slug, type Origins, type Page, type Site } from './site.js';
import { wikiPath } from './wiki.js';

const SITE = 'Lindenau Gazette';
const PER_PAGE = 20;

const PLACES = ['Town Hall', 'Old Mill', 'Stone Bridge', 'Museum of Clocks', 'Railway Station', 'Market Square', 'Lindenau Library', 'Water Tower', 'Chestnut Park', 'Botanical Garden', "Weavers' Hall", 'Clock Tower'];
const EVENTS = ['Lantern Festival', 'Linden Blossom Fair', 'Midsummer Regatta', 'Harvest Market', "Clockmakers' Day", 'Christmas Market', 'Plum Dumpling Day'];
const DISHES = ['Koláče', 'Apfelstrudel', 'Crème brûlée', 'Guláš', 'Linden honey cake', 'Bramboráky', 'Käsespätzle', 'Tarte Tatin'];
const NAMES = ['Anna Vogel', 'Tomáš Svoboda', 'Hélène Moreau', 'Greta Fischer', 'Paul Keller', 'Jana Novák', 'Emil Weber', 'Clara Richter'];

const HEADLINES = [
  '{place} to reopen after repairs',
  'Council approves new lights for the {place}',
  'Record crowds at this year\'s {event}',
  '{name} wins the {event} prize',
  'Volunteers clean the river Wend below the {place}',
  'Recipe of the week: {dish}',
  'Visitors from Lipová and Saint-Aubin at the {event}',
  'School children paint a mural near the {place}',
  'Night tours of the {place} begin in spring',
  'Letters: readers remember the old tram to the {place}',
];

const PARAGRAPHS = [
  'The mayor said the town had waited a long time for this, and thanked everyone who helped.',
  'Residents of {street} told the Gazette they were pleased, though some worried about parking.',
  'The work was paid for by the town and a grant from the regional council.',
  '{name}, who has lived in Lindenau for forty years, called it "the best news since the railway".',
  'More details will follow in next week\'s edition; the council meets again on Thursday.',
  'The Lindenau Wiki has the history of the {place}.',
  'As always, the Wend Brewery poured its dark lager and the bakers sold linden honey cake.',
];
const STREETS = ['Mill Lane', 'Bridge Street', 'Market Street', 'Linden Avenue', 'Station Road', 'Church Row'];

interface Post {
  path: string;
  title: string;
  date: Date;
  body: string;
}

function nav(): string {
  return [link('/', 'Latest'), link('/archive/', 'Archive'), link('/about', 'About')].join(' · ');
}

function postPage(post: Post): Page {
  return html(
    layout({ site: SITE, title: post.title, nav: nav(), main: `<article>\n<h1>${post.title}</h1>\n<p><time datetime="${post.date.toISOString().slice(0, 10)}">${post.date.toDateString()}</time></p>\n${post.body}\n</article>` }),
    post.date,
  );
}

function makePosts(origins: Origins): Post[] {
  const posts: Post[] = [];
  for (let week = 0; week < 72; week++) {
    const rng = new Rng(`news/${week}`);
    const date = new Date(Date.UTC(2025, 0, 6 + week * 7, 9));
    const dish = rng.pick(DISHES);
    const values = { place: rng.pick(PLACES), event: rng.pick(EVENTS), name: rng.pick(NAMES), dish, street: rng.pick(STREETS) };
    const title = fill(HEADLINES[week % HEADLINES.length]!, values);
    const lead = title.startsWith('Recipe of the week')
      ? `<p>This week's recipe comes from The Copper Pot: ${link(`${origins.recipes}/recipes/${slug(dish)}`, dish)}, a dish every Lindenau kitchen knows.</p>`
      : `<p>${title}. The ${link(`${origins.wiki}${wikiPath(values.place)}`, values.place)} has been part of Lindenau life for generations.</p>`;
    const rest = rng.some(PARAGRAPHS, 3).map((p) => `<p>${fill(p, values)}</p>`);
    const path = `/${date.getUTCFullYear()}/${String(date.getUTCMonth() + 1).padStart(2, '0')}/${slug(title)}`;
    posts.push({ path, title, date, body: [lead, ...rest].join('\n') });
  }
  // The long story, and its republication with the last paragraph changed.
  const story = [
    'After eighteen months behind scaffolding, the Stone Bridge over the river Wend opened again to walkers and cyclists on Saturday morning.',
    'Masons from three towns replaced more than two hundred stones of the seven arches, using limestone from the same quarry as the builders of 1512.',
    'The statue of Saint Nepomuk on the fourth arch was cleaned and given a new gilded halo of five stars, paid for by a collection at the Christmas Market.',
    'Traffic will not return: the council decided last year that the bridge belongs to people on foot and on bicycles, and to the Lantern Festival.',
    'The mayor cut a ribbon in the colours of Lindenau, and the brass band of Lipová played the Lantern Song on the riverbank.',
  ];
  const original = new Date(Date.UTC(2025, 5, 14, 9));
  const updated = new Date(Date.UTC(2025, 5, 16, 9));
  posts.push({ path: '/2025/06/stone-bridge-reopens', title: 'Stone Bridge reopens to walkers and cyclists', date: original, body: [...story, 'Celebrations continue on Sunday with a picnic under the arches.'].map((p) => `<p>${p}</p>`).join('\n') });
  posts.push({ path: '/2025/06/stone-bridge-reopens-updated', title: 'Stone Bridge reopens to walkers and cyclists (updated)', date: updated, body: [...story, 'Update: the Sunday picnic moved to Chestnut Park because of rain.'].map((p) => `<p>${p}</p>`).join('\n') });
  return posts.sort((a, b) => b.date.getTime() - a.date.getTime());
}

export function news(origins: Origins): Site {
  const pages = new Map<string, Page>();
  const posts = makePosts(origins);
  for (const post of posts) pages.set(post.path, postPage(post));
  const item = (p: Post): string => `${link(p.path, p.title)} <small>${p.date.toISOString().slice(0, 10)}</small>`;
  const pageCount = Math.ceil(posts.length / PER_PAGE);
  for (let n = 1; n <= pageCount; n++) {
    const slice = posts.slice((n - 1) * PER_PAGE, n * PER_PAGE);
    const older = n < pageCount ? link(`/page/${n + 1}`, 'Older posts') : '';
    const newer = n > 1 ? link(n === 2 ? '/' : `/page/${n - 1}`, 'Newer posts') : '';
    const intro = n === 1 ? `<p>News from Lindenau, the river town on the Wend. See also the ${link(`${origins.wiki}/`, 'Lindenau Wiki')} and ${link(`${origins.recipes}/`, 'The Copper Pot')}.</p>\n` : '';
    const main = `<h1>${n === 1 ? 'Latest news' : `Older news, page ${n}`}</h1>\n${intro}${list(slice.map(item))}\n<p>${[newer, older].filter((l) => l !== '').join(' · ')}</p>`;
    pages.set(n === 1 ? '/' : `/page/${n}`, html(layout({ site: SITE, title: n === 1 ? 'Latest news' : `Page ${n}`, nav: nav(), main }), slice[0]!.date));
  }
  const months = [...new Set(posts.map((p) => p.path.slice(1, 8)))];
  for (const month of months) {
    const mine = posts.filter((p) => p.path.startsWith(`/${month}/`));
    pages.set(`/archive/${month.replace('/', '-')}`, html(layout({ site: SITE, title: `Archive ${month.replace('/', '-')}`, nav: nav(), main: `<h1>News of ${month.replace('/', '-')}</h1>\n${list(mine.map(item))}` })));
  }
  pages.set('/archive/', html(layout({ site: SITE, title: 'Archive', nav: nav(), main: `<h1>Archive</h1>\n${list(months.map((m) => link(`/archive/${m.replace('/', '-')}`, m.replace('/', '-'))))}` })));
  pages.set(
    '/about',
    html(layout({ site: SITE, title: 'About', nav: nav(), main: '<h1>About the Gazette</h1>\n<p>The <em>Lindenau Gazette</em> has reported the news of Lindenau since 1879, first on paper and now on this blog. Letters to the editor are welcome.</p>' })),
  );
  return { key: 'news', name: SITE, pages };
}
