/**
 * Quill's documentation: the docs of a fictional template library, the kind
 * of site people search for one function. Guides, an API reference page per
 * function (signature in <pre><code>), and a changelog entry per release.
 * Words sharing a stem (configure, configuration, configurable, config…)
 * make prefix queries worth trying.
 */

import { html, layout, link, list, Rng, type Origins, type Page, type Site } from './site.js';

const SITE = 'Quill documentation';

const FUNCTIONS: Array<[string, string, string]> = [
  ['render', 'render(template, data, options?)', 'Renders a template string with the given data and returns the output as a string.'],
  ['renderFile', 'renderFile(path, data, options?)', 'Reads a template file, compiles it (once, through the cache) and renders it with the data.'],
  ['compile', 'compile(source, options?)', 'Compiles template source into a reusable function; compile once, render many times.'],
  ['configure', 'configure(options)', 'Sets the global configuration: template folders, delimiters, escaping and the cache.'],
  ['loadConfig', 'loadConfig(path)', 'Loads a configuration file (quill.config.json) and applies it as configure() would.'],
  ['registerFilter', 'registerFilter(name, fn)', 'Adds a filter usable in templates as {{ value | name }}.'],
  ['registerHelper', 'registerHelper(name, fn)', 'Adds a helper function callable from any template.'],
  ['registerPartial', 'registerPartial(name, source)', 'Registers a partial template included with {{> name }}.'],
  ['escapeHtml', 'escapeHtml(text)', 'Escapes &, <, >, quotes and apostrophes; applied to every {{ value }} unless configured otherwise.'],
  ['unescape', 'unescape(text)', 'Reverses escapeHtml for the five entities it writes.'],
  ['parse', 'parse(source)', 'Parses template source into a syntax tree, for tools and linters.'],
  ['tokenize', 'tokenize(source)', 'Splits template source into text, tag and comment tokens with their positions.'],
  ['clearCache', 'clearCache()', 'Empties the compiled-template cache, for example after templates changed on disk.'],
  ['cacheStats', 'cacheStats()', 'Returns hits, misses and the number of compiled templates held by the cache.'],
  ['setDelimiters', 'setDelimiters(open, close)', 'Changes the tag delimiters from {{ and }} to any pair of strings.'],
  ['createEnvironment', 'createEnvironment(options?)', 'Creates an isolated environment with its own configuration, filters, helpers and cache.'],
  ['watch', 'watch(folder, callback)', 'Watches a template folder and recompiles templates when they change.'],
  ['precompile', 'precompile(folder, outFile)', 'Compiles every template of a folder into one JavaScript module for the browser.'],
  ['validate', 'validate(source)', 'Checks template syntax without rendering and returns every error with its line and column.'],
  ['formatDate', 'formatDate(date, pattern)', 'The built-in date filter: formats a date with a pattern such as YYYY-MM-DD.'],
  ['truncate', 'truncate(text, length)', 'The built-in filter that shortens text to a length, adding an ellipsis.'],
  ['slugify', 'slugify(text)', 'The built-in filter that turns a title into a URL path segment.'],
  ['pluralize', 'pluralize(count, singular, plural)', 'The built-in filter choosing the singular or plural form of a word.'],
  ['TemplateError', 'class TemplateError extends Error', 'Thrown for syntax and render errors; carries the template name, line and column.'],
];

const GUIDES: Array<[string, string]> = [
  ['Installation', 'Install Quill from the package registry with npm install quill-templates. Quill needs Node.js 18 or newer and has no dependencies.'],
  ['Getting started', 'Write a template with {{ name }} tags, call render() with your data, and print the result. The tutorial builds a small blog in ten minutes.'],
  ['Configuration', 'Quill is configurable through configure(), a quill.config.json file read by loadConfig(), or environment variables. Every configuration key has a default.'],
  ['Configuring template folders', 'Set the folders option of configure() to the list of directories where renderFile() looks for templates, searched in order.'],
  ['Filters', 'Filters transform values inside tags: {{ title | truncate 40 }}. Register your own with registerFilter(); chain several with the pipe.'],
  ['Helpers and partials', 'Helpers are functions callable from templates; partials are templates included in other templates. Both are registered once per environment.'],
  ['Escaping and security', 'Every value is HTML-escaped by default. Use {{{ raw }}} only for markup you trust; never for text that came from users.'],
  ['Caching', 'Compiled templates are cached by file name and modification time. Configure the cache size, or disable caching while developing.'],
  ['Error handling', 'Syntax errors throw a TemplateError naming the template, line and column; validate() reports them all at once, for editors.'],
  ['Using Quill in the browser', 'precompile() turns a folder of templates into one module; the browser build of Quill renders them without a compiler.'],
  ['Migrating from version 1', 'Version 2 renamed setConfig() to configure(), made escaping the default, and dropped support for Node.js 14.'],
  ['Performance tips', 'Compile once and render many times; keep partials small; use createEnvironment() per tenant rather than reconfiguring globally.'],
];

const CHANGES = [
  'Faster compilation of large templates',
  'New filter: {name}',
  'Fixed a crash when a partial includes itself',
  'configure() validates unknown keys and reports them',
  'Better error messages with line and column',
  'The cache now notices renamed template files',
  'Documentation: new guide on escaping and security',
  'Fixed escaping of apostrophes in attributes',
  'Smaller browser build',
  'loadConfig() accepts a configuration object as well as a path',
];

function nav(): string {
  return [link('/docs/', 'Guides'), link('/api/', 'API reference'), link('/changelog/', 'Changelog')].join(' · ');
}

function page(title: string, main: string, description?: string): Page {
  return html(layout({ site: SITE, title, nav: nav(), main: `<h1>${title}</h1>\n${main}`, footer: 'Quill is free software under the MIT licence.', ...(description === undefined ? {} : { description }) }));
}

function guidePath(title: string): string {
  return `/docs/${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

export function docs(origins: Origins): Site {
  const pages = new Map<string, Page>();
  for (const [name, signature, summary] of FUNCTIONS) {
    const rng = new Rng(`docs/${name}`);
    const related = rng.some(FUNCTIONS, 3).filter(([n]) => n !== name);
    pages.set(
      `/api/${name}`,
      page(
        name,
        `<pre><code>${signature}</code></pre>
<p>${summary}</p>
<h2>Example</h2>
<pre><code>import { ${name} } from 'quill-templates';</code></pre>
<p>Available since version ${rng.int(0, 2)}.${rng.int(0, 9)}. ${rng.pick(['Throws a TemplateError on invalid input.', 'Returns immediately; nothing is written to disk.', 'Safe to call from several environments at once.'])}</p>
<h2>See also</h2>
${list(related.map(([n]) => link(`/api/${n}`, n)))}`,
        summary,
      ),
    );
  }
  for (const [title, body] of GUIDES) {
    const rng = new Rng(`docs/${title}`);
    const fns = rng.some(FUNCTIONS, 3);
    pages.set(
      guidePath(title),
      page(title, `<p>${body}</p>\n<p>Functions used in this guide: ${fns.map(([n]) => link(`/api/${n}`, `<code>${n}()</code>`)).join(', ')}.</p>`, body.split('. ')[0]),
    );
  }
  const releases: string[] = [];
  for (let major = 0; major <= 2; major++) {
    for (let minor = 0; minor <= (major === 2 ? 4 : 9); minor++) releases.push(`${major}.${minor}.0`);
  }
  for (const [i, version] of releases.entries()) {
    const rng = new Rng(`docs/${version}`);
    const changes = rng.some(CHANGES, 3).map((c) => c.replace('{name}', rng.pick(FUNCTIONS)[0]));
    const date = new Date(Date.UTC(2021, i * 2, 1 + (i % 27)));
    pages.set(`/changelog/${version}`, html(layout({ site: SITE, title: `Quill ${version}`, nav: nav(), main: `<h1>Quill ${version}</h1>\n<p>Released ${date.toISOString().slice(0, 10)}.</p>\n${list(changes)}` }), date));
  }
  pages.set('/docs/', page('Guides', list(GUIDES.map(([t]) => link(guidePath(t), t)))));
  pages.set('/api/', page('API reference', list(FUNCTIONS.map(([n, , s]) => `${link(`/api/${n}`, `<code>${n}</code>`)}: ${s}`))));
  pages.set('/changelog/', page('Changelog', list([...releases].reverse().map((v) => link(`/changelog/${v}`, `Quill ${v}`)))));
  pages.set(
    '/',
    page(
      'Quill',
      `<p><b>Quill</b> is a small, fast template library for JavaScript: logic-light templates, escaping by default, filters, partials and a cache. It powers the ${link(`${origins.wiki}/`, 'Lindenau Wiki')}.</p>
${list([link('/docs/', 'Guides'), link('/api/', 'API reference'), link('/changelog/', 'Changelog')])}`,
      'Quill, a small template library for JavaScript',
    ),
  );
  return { key: 'docs', name: SITE, pages };
}
