/**
 * The Copper Pot: a recipe site. Classic dishes of five kitchens, many with
 * their French, German or Czech names (crème brûlée, Käsespätzle, svíčková),
 * plus everyday variations put together from ingredient lists; a page per
 * recipe, per kitchen and per main ingredient. Printer-friendly copies of a
 * few recipes are exact duplicates, and "Grandma's apple strudel" repeats the
 * Apfelstrudel recipe with one step changed: a near duplicate.
 */

import { html, layout, link, list, Rng, slug, type Origins, type Page, type Site } from './site.js';

const SITE = 'The Copper Pot';

interface Recipe {
  name: string;
  kitchen: string;
  lang: string;
  about: string;
  ingredients: string[];
}

const CLASSICS: Recipe[] = [
  { name: 'Crème brûlée', kitchen: 'French', lang: 'fr', about: 'A cold vanilla custard under a crust of caramelised sugar, cracked with the back of a spoon.', ingredients: ['cream', 'egg', 'sugar', 'vanilla'] },
  { name: 'Gratin dauphinois', kitchen: 'French', lang: 'fr', about: 'Thinly sliced potatoes baked slowly in garlic cream until golden on top.', ingredients: ['potato', 'cream', 'garlic', 'nutmeg'] },
  { name: 'Bœuf bourguignon', kitchen: 'French', lang: 'fr', about: 'Beef braised for hours in red Burgundy wine with mushrooms, onions and bacon.', ingredients: ['beef', 'red wine', 'mushroom', 'onion', 'bacon'] },
  { name: 'Ratatouille', kitchen: 'French', lang: 'fr', about: 'A Provençal stew of aubergine, courgette, pepper and tomato, better the next day.', ingredients: ['aubergine', 'courgette', 'tomato', 'pepper', 'olive oil'] },
  { name: 'Quiche lorraine', kitchen: 'French', lang: 'fr', about: 'A short pastry case filled with eggs, cream and smoked bacon.', ingredients: ['flour', 'butter', 'egg', 'cream', 'bacon'] },
  { name: 'Soupe à l\'oignon', kitchen: 'French', lang: 'fr', about: 'Onions cooked slowly until brown and sweet, in beef broth under a lid of toasted bread and melted cheese.', ingredients: ['onion', 'butter', 'cheese', 'bread'] },
  { name: 'Salade niçoise', kitchen: 'French', lang: 'fr', about: 'Tomatoes, eggs, olives, green beans and tuna with an anchovy dressing, as they make it in Nice.', ingredients: ['tomato', 'egg', 'olive', 'tuna', 'green beans'] },
  { name: 'Tarte Tatin', kitchen: 'French', lang: 'fr', about: 'An upside-down apple tart: apples caramelised in the pan, pastry on top, turned out warm.', ingredients: ['apple', 'butter', 'sugar', 'flour'] },
  { name: 'Apfelstrudel', kitchen: 'German', lang: 'de', about: 'Paper-thin stretched dough rolled around apples, raisins and cinnamon, dusted with icing sugar.', ingredients: ['apple', 'flour', 'raisin', 'cinnamon', 'butter'] },
  { name: 'Käsespätzle', kitchen: 'German', lang: 'de', about: 'Soft egg noodles layered with mountain cheese and crowned with crisp fried onions.', ingredients: ['flour', 'egg', 'cheese', 'onion'] },
  { name: 'Kartoffelsalat', kitchen: 'German', lang: 'de', about: 'A Swabian potato salad dressed warm with broth, vinegar and chives, no mayonnaise.', ingredients: ['potato', 'onion', 'vinegar', 'chives'] },
  { name: 'Sauerbraten', kitchen: 'German', lang: 'de', about: 'Beef marinated for days in vinegar and spices, braised and served with a gingerbread gravy.', ingredients: ['beef', 'vinegar', 'onion', 'gingerbread'] },
  { name: 'Schwarzwälder Kirschtorte', kitchen: 'German', lang: 'de', about: 'The Black Forest cake: chocolate sponge, cherries, kirsch and a great deal of whipped cream.', ingredients: ['chocolate', 'cherry', 'cream', 'flour', 'egg'] },
  { name: 'Königsberger Klopse', kitchen: 'German', lang: 'de', about: 'Poached meatballs in a white caper sauce, served with boiled potatoes.', ingredients: ['pork', 'beef', 'caper', 'potato'] },
  { name: 'Linden honey cake', kitchen: 'German', lang: 'en', about: 'The cake of the Lindenau Linden Blossom Fair: honey from the linden trees, almonds and a lemon glaze.', ingredients: ['honey', 'flour', 'almond', 'lemon', 'egg'] },
  { name: 'Svíčková na smetaně', kitchen: 'Czech', lang: 'cs', about: 'Marinated beef sirloin in a creamy root-vegetable sauce, with bread dumplings and cranberries.', ingredients: ['beef', 'carrot', 'celeriac', 'cream', 'cranberry'] },
  { name: 'Knedlíky', kitchen: 'Czech', lang: 'cs', about: 'Czech bread dumplings, steamed in a long roll and sliced with a thread.', ingredients: ['flour', 'bread', 'milk', 'egg', 'yeast'] },
  { name: 'Švestkové knedlíky', kitchen: 'Czech', lang: 'cs', about: 'Plum dumplings: whole plums wrapped in potato dough, boiled, and served with butter, sugar and poppy seed.', ingredients: ['plum', 'potato', 'flour', 'butter', 'poppy seed'] },
  { name: 'Koláče', kitchen: 'Czech', lang: 'cs', about: 'Round yeast buns filled with plum jam, poppy seed or sweet curd cheese, baked for every village feast.', ingredients: ['flour', 'yeast', 'milk', 'plum', 'poppy seed'] },
  { name: 'Bramboráky', kitchen: 'Czech', lang: 'cs', about: 'Crisp potato pancakes with garlic and marjoram, fried in lard.', ingredients: ['potato', 'garlic', 'marjoram', 'flour'] },
  { name: 'Guláš', kitchen: 'Czech', lang: 'cs', about: 'The Czech goulash: beef and onions with sweet paprika and caraway, eaten with dumplings and a beer.', ingredients: ['beef', 'onion', 'paprika', 'caraway'] },
  { name: 'Trdelník', kitchen: 'Czech', lang: 'cs', about: 'Dough wound around a wooden spit, roasted over embers and rolled in sugar and walnuts.', ingredients: ['flour', 'yeast', 'sugar', 'walnut'] },
  { name: 'Risotto ai funghi', kitchen: 'Italian', lang: 'it', about: 'Arborio rice stirred with mushroom broth, finished with butter and parmesan.', ingredients: ['rice', 'mushroom', 'butter', 'parmesan'] },
  { name: 'Minestrone', kitchen: 'Italian', lang: 'it', about: 'A thick vegetable soup with beans and small pasta.', ingredients: ['tomato', 'beans', 'carrot', 'pasta', 'celery'] },
  { name: 'Tiramisù', kitchen: 'Italian', lang: 'it', about: 'Coffee-soaked biscuits and mascarpone cream, dusted with cocoa.', ingredients: ['mascarpone', 'coffee', 'egg', 'cocoa'] },
  { name: 'Focaccia', kitchen: 'Italian', lang: 'it', about: 'A flat olive-oil bread dimpled with the fingertips and scattered with rosemary and salt.', ingredients: ['flour', 'yeast', 'olive oil', 'rosemary'] },
];

const DISHES = ['soup', 'stew', 'pie', 'salad', 'tart', 'gratin', 'risotto', 'pancakes', 'bake', 'roast'];
const MAINS = ['tomato', 'pumpkin', 'mushroom', 'chicken', 'lentil', 'leek', 'apple', 'pear', 'beetroot', 'spinach', 'trout', 'plum'];
const FLAVOURS = ['lemon and thyme', 'smoky paprika', 'garlic and herb', 'honey and mustard', 'ginger', 'sage and butter', 'chilli', 'rosemary'];
const EXTRAS = ['onion', 'garlic', 'butter', 'cream', 'potato', 'carrot', 'cheese', 'olive oil', 'parsley', 'egg'];
const STEPS = [
  'Wash and chop the {a} and the {b}.',
  'Warm the {c} in a heavy pan over a medium heat.',
  'Add the {a} and cook gently for ten minutes, stirring now and then.',
  'Season with salt and pepper, then stir in the {b}.',
  'Bake in a hot oven (200 °C) for twenty-five minutes, until golden.',
  'Leave to rest for five minutes before serving.',
  'Taste, adjust the seasoning and serve with fresh bread.',
  'Simmer slowly, half covered, for forty minutes.',
];

function everydayRecipes(): Recipe[] {
  const out: Recipe[] = [];
  const seen = new Set<string>();
  const rng = new Rng('recipes/everyday');
  while (out.length < 48) {
    const main = rng.pick(MAINS);
    const dish = rng.pick(DISHES);
    const flavour = rng.pick(FLAVOURS);
    const name = `${flavour.charAt(0).toUpperCase()}${flavour.slice(1)} ${main} ${dish}`;
    if (seen.has(name)) continue;
    seen.add(name);
    out.push({ name, kitchen: 'Everyday', lang: 'en', about: `A weeknight ${dish} of ${main} with ${flavour}, ready in under an hour.`, ingredients: [main, ...rng.some(EXTRAS, 3)] });
  }
  return out;
}

function nav(): string {
  return ['French', 'German', 'Czech', 'Italian', 'Everyday'].map((k) => link(`/kitchen/${slug(k)}`, k)).join(' · ');
}

function recipePage(recipe: Recipe, origins: Origins, variant?: { name: string; step: string }): string {
  const rng = new Rng(`recipes/${recipe.name}`);
  const [a, b, c] = [recipe.ingredients[0]!, recipe.ingredients[1] ?? 'salt', recipe.ingredients[2] ?? 'butter'];
  const steps = rng.some(STEPS, 5).map((s) => s.replace('{a}', a).replace('{b}', b).replace('{c}', c));
  if (variant !== undefined) steps[steps.length - 1] = variant.step;
  const name = variant?.name ?? recipe.name;
  const lindenau = recipe.kitchen === 'Czech' || recipe.name === 'Apfelstrudel' ? `<p>A favourite at Lindenau's ${link(`${origins.wiki}/wiki/Christmas_Market`, 'Christmas Market')}.</p>` : '';
  return layout({
    site: SITE,
    title: name,
    description: recipe.about,
    nav: nav(),
    main: `<article>
<h1 lang="${recipe.lang}">${name}</h1>
<p class="meta">${recipe.kitchen} kitchen · serves ${rng.int(2, 6)} · ${rng.int(2, 12) * 10} minutes</p>
<p><em>${recipe.about}</em></p>
<h2>Ingredients</h2>
${list(recipe.ingredients.map((i) => link(`/ingredient/${slug(i)}`, i)))}
<h2>Method</h2>
<ol>
${steps.map((s) => `<li>${s}</li>`).join('\n')}
</ol>
${lindenau}</article>`,
  });
}

export function recipes(origins: Origins): Site {
  const pages = new Map<string, Page>();
  const all = [...CLASSICS, ...everydayRecipes()];
  for (const recipe of all) pages.set(`/recipes/${slug(recipe.name)}`, html(recipePage(recipe, origins)));
  // Printer-friendly copies: the same bytes under another URL.
  for (const recipe of CLASSICS.slice(0, 4)) pages.set(`/print/${slug(recipe.name)}`, html(recipePage(recipe, origins)));
  const strudel = CLASSICS.find((r) => r.name === 'Apfelstrudel')!;
  pages.set(
    '/recipes/grandmas-apple-strudel',
    html(recipePage(strudel, origins, { name: 'Apfelstrudel', step: 'Grandma adds a handful of toasted breadcrumbs before rolling.' })),
  );

  const kitchens = [...new Set(all.map((r) => r.kitchen))];
  for (const kitchen of kitchens) {
    const mine = all.filter((r) => r.kitchen === kitchen);
    pages.set(
      `/kitchen/${slug(kitchen)}`,
      html(layout({ site: SITE, title: `${kitchen} recipes`, nav: nav(), main: `<h1>${kitchen} recipes</h1>\n${list(mine.map((r) => `${link(`/recipes/${slug(r.name)}`, r.name)}: ${r.about}`))}` })),
    );
  }
  const ingredients = [...new Set(all.flatMap((r) => r.ingredients))].sort();
  for (const ingredient of ingredients) {
    const using = all.filter((r) => r.ingredients.includes(ingredient));
    pages.set(
      `/ingredient/${slug(ingredient)}`,
      html(layout({ site: SITE, title: `Recipes with ${ingredient}`, nav: nav(), main: `<h1>Recipes with ${ingredient}</h1>\n${list(using.map((r) => `${link(`/recipes/${slug(r.name)}`, r.name)}: ${r.about}`))}` })),
    );
  }
  pages.set(
    '/',
    html(
      layout({
        site: SITE,
        title: 'Home',
        nav: nav(),
        description: 'Recipes from Lindenau kitchens and beyond',
        main: `<h1>The Copper Pot</h1>
<p>Recipes from the kitchens of Lindenau and its twin towns, tested in a small kitchen with one copper pot. Print any recipe: ${link(`/print/${slug(CLASSICS[0]!.name)}`, 'printer-friendly crème brûlée')}. Family versions: ${link('/recipes/grandmas-apple-strudel', "Grandma's apple strudel")}.</p>
${kitchens.map((k) => `<h2>${link(`/kitchen/${slug(k)}`, `${k} kitchen`)}</h2>\n${list(all.filter((r) => r.kitchen === k).map((r) => link(`/recipes/${slug(r.name)}`, r.name)))}`).join('\n')}
<h2>By ingredient</h2>
<p>${ingredients.map((i) => link(`/ingredient/${slug(i)}`, i)).join(', ')}</p>
<p>News from town: ${link(`${origins.news}/`, 'Lindenau Gazette')}.</p>`,
      }),
    ),
  );
  return { key: 'recipes', name: SITE, pages };
}
