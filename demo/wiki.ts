/**
 * The Lindenau Wiki: a small encyclopedia of a fictional river town. About
 * 75 articles (places, people, streets, events, history, the twin towns in
 * Czech and French, a club in German), a main page linking them all, and
 * what real sites have: a robots.txt keeping crawlers out of /private/, an
 * old title that redirects (/wiki/Townhall), a red link to a missing article
 * (404), and printable versions that are exact duplicates of their article.
 */

import { fill, html, layout, link, list, redirect, Rng, text, type Origins, type Page, type Site } from './site.js';

const SITE = 'Lindenau Wiki';

interface Place {
  title: string;
  kind: string;
  year: number;
  district: string;
  note: string;
}

const PLACES: Place[] = [
  { title: 'Town Hall', kind: 'Renaissance town hall', year: 1562, district: 'the Old Town', note: 'Its bell still rings at noon, and the council meets in the vaulted hall on the first floor.' },
  { title: 'Old Mill', kind: 'water mill on the river Wend', year: 1388, district: 'Millbrook', note: 'The mill ground flour for six villages until 1954; its two wheels turn again since the restoration of 2008.' },
  { title: "St. Martin's Church", kind: 'Gothic parish church', year: 1420, district: 'the Old Town', note: 'The tower can be climbed on Saturdays; from the top the whole valley of the Wend is visible.' },
  { title: 'Stone Bridge', kind: 'seven-arched stone bridge', year: 1512, district: 'the riverside', note: 'Carts, trams and now bicycles have crossed it; the statue of Saint Nepomuk watches from the fourth arch.' },
  { title: 'Museum of Clocks', kind: 'museum of clockmaking', year: 1931, district: 'Clock Street', note: 'Over four hundred clocks tick in its rooms, from tower movements to pocket watches made by Lindenau masters.' },
  { title: 'Railway Station', kind: 'railway station', year: 1871, district: 'Station Quarter', note: 'The brick hall with its cast-iron roof was built when the line from Weissberg reached the town.' },
  { title: 'Market Square', kind: 'market square', year: 1241, district: 'the Old Town', note: 'A market has been held here every Thursday since the town charter; the fountain in the middle is fed by a spring.' },
  { title: 'Lindenau Library', kind: 'public library', year: 1902, district: 'Linden Avenue', note: 'Its reading room keeps the town archive, including the chronicle of the Great Flood.' },
  { title: 'Water Tower', kind: 'brick water tower', year: 1898, district: 'Orchard Hill', note: 'No longer holding water, it is now a lookout and a small gallery of photographs.' },
  { title: 'Wend Brewery', kind: 'brewery', year: 1702, district: 'Tanner\'s Alley', note: 'The dark lager brewed here is served at every town festival.' },
  { title: 'Clock Tower', kind: 'clock tower', year: 1611, district: 'Market Square', note: 'Its clockwork was rebuilt by Anna Vogel in 1888 and has lost less than a minute a month since.' },
  { title: 'Chestnut Park', kind: 'public park', year: 1865, district: 'Chestnut Close', note: 'Two hundred chestnut trees line its paths; the bandstand hosts concerts on summer Sundays.' },
  { title: 'Weavers\' Hall', kind: 'guild hall', year: 1590, district: 'Weaver\'s Walk', note: 'The weavers\' guild met here for three centuries; today it is the town\'s concert hall.' },
  { title: 'Lindenau Lighthouse', kind: 'river lighthouse', year: 1843, district: 'the harbour', note: 'The only lighthouse on the Wend guided barges through the fog at the river bend.' },
  { title: 'Old Cemetery', kind: 'cemetery', year: 1680, district: 'Church Row', note: 'Many of the clockmakers are buried under the lime trees of its eastern wall.' },
  { title: 'Botanical Garden', kind: 'botanical garden', year: 1923, district: 'Orchard Hill', note: 'Its glasshouse keeps the oldest fig tree north of the Alps, or so the gardeners say.' },
];

const STREETS = [
  'Mill Lane', 'Linden Avenue', 'Bridge Street', 'Church Row', 'Market Street', "Weaver's Walk",
  'Station Road', 'Orchard Hill', "Tanner's Alley", 'River Walk', 'Clock Street', 'Chestnut Close',
];

const FIRST = ['Anna', 'Johann', 'Marie', 'Karel', 'Elise', 'Friedrich', 'Hélène', 'Tomáš', 'Greta', 'Paul', 'Clara', 'Emil', 'Rosa', 'Wilhelm', 'Jana', 'Otto'];
const LAST = ['Vogel', 'Brandt', 'Novák', 'Keller', 'Lambert', 'Weber', 'Dvořák', 'Fischer', 'Moreau', 'Hartmann', 'Svoboda', 'Richter'];
const TRADES: Array<[string, string]> = [
  ['clockmaker', 'built tower clocks for a dozen towns and trained the apprentices of the Clockmakers\' Guild'],
  ['miller', 'ran the Old Mill through the hard winters and fed the town during the flood'],
  ['brewer', 'gave the Wend Brewery its famous dark lager recipe'],
  ['mayor', 'brought the railway to Lindenau and paved the Market Square'],
  ['painter', 'painted the river Wend in every season; the Town Hall keeps twelve of the paintings'],
  ['schoolteacher', 'founded the first girls\' school and the lending library that grew into the Lindenau Library'],
  ['botanist', 'planted the Botanical Garden and catalogued the wild orchids of Orchard Hill'],
  ['railway engineer', 'designed the cast-iron roof of the Railway Station'],
  ['baker', 'invented the linden honey cake still sold at the Linden Blossom Fair'],
  ['composer', 'wrote the Lindenau Lantern Song sung every autumn at the Lantern Festival'],
];

const EVENTS: Array<[string, string, string]> = [
  ['Lantern Festival', 'October', 'Children carry paper lanterns from the Market Square across the Stone Bridge and sing the Lantern Song.'],
  ['Linden Blossom Fair', 'June', 'Stalls of linden honey, honey cake and lime-blossom tea fill Linden Avenue for a weekend.'],
  ['Midsummer Regatta', 'June', 'Rowing crews race from the Old Mill to the Lighthouse; the winners ring the Town Hall bell.'],
  ['Harvest Market', 'September', 'Farmers from the valley sell apples, plums and pumpkins; the brewery pours its autumn beer.'],
  ["Clockmakers' Day", 'March', 'The Museum of Clocks opens its workshops and every clock in town is set by the tower clock.'],
  ['Christmas Market', 'December', 'Wooden huts on the Market Square sell mulled wine, gingerbread and Czech trdelník from Lipová.'],
  ['Plum Dumpling Day', 'August', 'A friendly contest with Lipová: who makes the best plum dumplings (švestkové knedlíky)?'],
];

const HISTORY: Array<[string, string]> = [
  ['Founding of Lindenau', 'The town received its charter in 1241, when a market grew at the ford of the river Wend under a great linden tree.'],
  ['Great Flood of 1784', 'In March 1784 the Wend rose higher than ever recorded; the Stone Bridge held, but the lower town was under water for nine days.'],
  ['Clockmakers\' Guild', 'From 1650 to 1900 Lindenau was known for its clockmakers, whose guild kept strict rules on apprentices and gears.'],
  ['Railway comes to Lindenau', 'The line from Weissberg opened in 1871; within ten years the town doubled in size and the Station Quarter was built.'],
  ['Lindenau in the twentieth century', 'The mills closed, the brewery grew, and in 1978 and 1992 the town made friends with Saint-Aubin-sur-Loire and Lipová.'],
  ['Tram of Lindenau', 'A single tram line ran from the Railway Station across the Stone Bridge to the Old Mill between 1907 and 1961.'],
];

const SENTENCES = [
  'It stands on {street}, a few minutes from the {other}.',
  'Visitors often combine it with a walk along the river Wend to the {other}.',
  'The building was restored in {restored} with money raised by the townspeople.',
  'Local guides tell the story of {person}, who knew the place well.',
  'In the Great Flood of 1784 the water reached its doorstep but did little damage.',
  'Guided tours start at the Market Square every Saturday at ten o\'clock.',
  'Old postcards show it with the linden trees that gave the town its name.',
  'The Lindenau Gazette reported on its anniversary in {restored}.',
];

/** Wiki path of a title: spaces become underscores, as wikis do. */
export function wikiPath(title: string): string {
  return `/wiki/${encodeURIComponent(title.replace(/ /g, '_'))}`;
}

function nav(): string {
  return [link('/', 'Main page'), link(wikiPath('History of Lindenau'), 'History'), link(wikiPath('Twin towns'), 'Twin towns')].join(' · ');
}

function article(title: string, main: string, lang = 'en', description?: string): string {
  return layout({ site: SITE, title, lang, nav: nav(), main: `<h1>${title}</h1>\n${main}`, ...(description === undefined ? {} : { description }) });
}

export function wiki(origins: Origins): Site {
  const pages = new Map<string, Page>();
  const people = FIRST.map((first, i) => `${first} ${LAST[(i * 5) % LAST.length]!}`);
  const add = (title: string, body: string): void => {
    pages.set(wikiPath(title), html(body));
  };

  for (const [i, place] of PLACES.entries()) {
    const rng = new Rng(`wiki/${place.title}`);
    const others = PLACES.filter((p) => p !== place);
    const sentences = rng.some(SENTENCES, 4).map((s) => {
      const other = rng.pick(others).title;
      const person = rng.pick(people);
      return fill(s, { street: rng.pick(STREETS), other: link(wikiPath(other), other), restored: rng.int(1950, 2022), person: link(wikiPath(person), person) });
    });
    const seeAlso = rng.some(others, 4).map((p) => link(wikiPath(p.title), p.title));
    const printable = i % 3 === 0 ? `<p>${link(`${wikiPath(place.title)}?printable=yes`, 'Printable version')}</p>` : '';
    const redLink = place.title === 'Railway Station' ? `<p>The ${link(wikiPath('Ghost Station'), 'Ghost Station')} on the branch line closed in 1930.</p>` : '';
    const news = i % 4 === 1 ? `<p>In the news: ${link(`${origins.news}/`, 'Lindenau Gazette')} follows the latest works on the ${place.title}.</p>` : '';
    const body = article(
      place.title,
      `<p>The <b>${place.title}</b> is a ${place.kind} in ${place.district}, Lindenau, first recorded in ${place.year}. ${place.note}</p>
<h2>Description</h2>
<p>${sentences.slice(0, 2).join(' ')}</p>
<h2>History</h2>
<p>${sentences.slice(2).join(' ')}</p>
${redLink}${news}<h2>See also</h2>
${list(seeAlso)}
${printable}`,
      'en',
      `${place.title}: ${place.kind} in Lindenau`,
    );
    add(place.title, body);
    // The printable version is the same document: an exact duplicate.
    if (printable !== '') pages.set(`${wikiPath(place.title)}?printable=yes`, html(body));
  }

  for (const [i, name] of people.entries()) {
    const rng = new Rng(`wiki/${name}`);
    const [trade, deed] = TRADES[i % TRADES.length]!;
    const born = 1780 + i * 9 + rng.int(0, 6);
    const place = rng.pick(PLACES);
    add(
      name,
      article(
        name,
        `<p><b>${name}</b> (${born}–${born + rng.int(55, 88)}) was a Lindenau ${trade} who ${deed}.</p>
<p>Born in a house on ${rng.pick(STREETS)}, ${name.split(' ')[0]} spent most of a long life in the town and is remembered at the ${link(wikiPath(place.title), place.title)}.</p>
<p>A street plaque and a portrait in the ${link(wikiPath('Town Hall'), 'Town Hall')} honour ${name.split(' ')[0]}'s work.</p>`,
      ),
    );
  }

  for (const street of STREETS) {
    const rng = new Rng(`wiki/${street}`);
    const near = rng.some(PLACES, 2);
    add(
      street,
      article(
        street,
        `<p><b>${street}</b> is a street in Lindenau. It runs past the ${near.map((p) => link(wikiPath(p.title), p.title)).join(' and the ')}.</p>
<p>Its cobblestones date from ${rng.int(1780, 1890)}; the houses along it are mostly of the ${rng.pick(['eighteenth', 'nineteenth'])} century, with ${rng.pick(['painted shutters', 'timber frames', 'carved doorways', 'small front gardens'])}.</p>`,
      ),
    );
  }

  for (const [title, month, what] of EVENTS) {
    add(title, article(title, `<p>The <b>${title}</b> is held in Lindenau every ${month}. ${what}</p>\n<p>See also the ${link(wikiPath('Market Square'), 'Market Square')} and the ${link(`${origins.news}/`, 'Lindenau Gazette')}'s reports.</p>`));
  }

  for (const [title, summary] of HISTORY) add(title, article(title, `<p>${summary}</p>`));
  add(
    'History of Lindenau',
    article('History of Lindenau', `<p>Lindenau is a small town on the river Wend. Its history in brief:</p>\n${list(HISTORY.map(([title]) => link(wikiPath(title), title)))}`),
  );

  add(
    'Lipová',
    article(
      'Lipová',
      `<p><b>Lipová</b> is Lindenau's Czech twin town. The text below comes from the town's own greeting.</p>
<p lang="cs">Lipová je malé město v Čechách na řece Vltavici. Partnerství s Lindenau začalo v roce 1992. Na náměstí stojí kostel svatého Václava a každé léto se koná pouť s koláči, knedlíky a dobrým pivem. Přátelé z Lindenau jsou u nás vždy vítáni.</p>
<p>Every August the two towns meet for ${link(wikiPath('Plum Dumpling Day'), 'Plum Dumpling Day')}. Recipes: ${link(`${origins.recipes}/recipes/svestkove-knedliky`, 'Švestkové knedlíky')}.</p>`,
    ),
  );
  add(
    'Saint-Aubin-sur-Loire',
    article(
      'Saint-Aubin-sur-Loire',
      `<p><b>Saint-Aubin-sur-Loire</b> is Lindenau's French twin town, since 1978.</p>
<p lang="fr">Saint-Aubin-sur-Loire est une petite commune française au bord de la Loire. Le marché du samedi, la boulangerie de la place et le café « Chez Hélène » sont célèbres dans toute la région. Chaque été, une délégation de Lindenau vient goûter la crème brûlée et le vin blanc du pays.</p>
<p>The town's favourite dessert: ${link(`${origins.recipes}/recipes/creme-brulee`, 'Crème brûlée')}.</p>`,
      'en',
    ),
  );
  add(
    'Lindenauer Mühlenverein',
    article(
      'Lindenauer Mühlenverein',
      `<p>Der <b>Lindenauer Mühlenverein</b> pflegt die ${link(wikiPath('Old Mill'), 'alte Mühle')} an der Wend. Führungen finden jeden Sonntag statt; Gäste können frisch gemahlenes Mehl kaufen und die Wasserräder besichtigen. Im Winter backen die Mitglieder Brot und Apfelstrudel für den Weihnachtsmarkt.</p>
<p>The mill club (in English: the Lindenau Mill Society) restored the Old Mill's wheels in 2008.</p>`,
      'de',
    ),
  );
  add(
    'Twin towns',
    article('Twin towns', `<p>Lindenau is twinned with:</p>\n${list([link(wikiPath('Lipová'), 'Lipová'), link(wikiPath('Saint-Aubin-sur-Loire'), 'Saint-Aubin-sur-Loire')])}`),
  );

  const section = (heading: string, titles: readonly string[]): string => `<h2>${heading}</h2>\n${list(titles.map((t) => link(wikiPath(t), t)))}`;
  pages.set(
    '/',
    html(
      layout({
        site: SITE,
        title: 'Main page',
        nav: nav(),
        description: 'The free encyclopedia of Lindenau, a small town on the river Wend',
        main: `<h1>Welcome to the Lindenau Wiki</h1>
<p>The free encyclopedia of <b>Lindenau</b>, a small town on the river Wend, known for its clockmakers, its Stone Bridge and its linden trees. The ${link(wikiPath('Townhall'), 'Townhall')} article was renamed; council papers are kept in the ${link('/private/council-minutes', 'council minutes')}.</p>
${section('Places', PLACES.map((p) => p.title))}
${section('People', people)}
${section('Streets', STREETS)}
${section('Events', EVENTS.map(([t]) => t))}
${section('History', ['History of Lindenau', ...HISTORY.map(([t]) => t)])}
${section('Twin towns and clubs', ['Twin towns', 'Lipová', 'Saint-Aubin-sur-Loire', 'Lindenauer Mühlenverein'])}
<p>Elsewhere: ${link(`${origins.recipes}/`, 'The Copper Pot')} (recipes from Lindenau's kitchens), ${link(`${origins.news}/`, 'Lindenau Gazette')}, and ${link(`${origins.docs}/`, 'Quill')}, the template library this wiki runs on.</p>`,
      }),
    ),
  );
  pages.set(wikiPath('Townhall'), redirect(wikiPath('Town Hall')));
  // Kept out by robots.txt: a crawler that obeys never sees this word.
  pages.set('/private/council-minutes', html(article('Council minutes', '<p>Confidential: the embezzlement inquiry is adjourned.</p>')));
  pages.set('/robots.txt', text('User-agent: *\nDisallow: /private/\n'));
  return { key: 'wiki', name: SITE, pages };
}
