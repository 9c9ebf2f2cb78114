/**
 * `sherlock search --state DIR [--json] [--limit N] [--offset N] QUERY`: one
 * query from the shell (DESIGN §2) on the version `state/index/current`
 * names, evaluated as the searcher does (searcher/index-engine.ts). Prints
 * the total and one block per hit (title, URL, snippet as text); `--json`
 * prints the result object of the WebSocket API. A query that does not parse
 * is a usage error (2) naming the character; no index version is a failure (1).
 *
 * Hidden, for bench/: `--bench-queries FILE [--passes N] [--warmup N]` times
 * a query set in this process (no network): FILE has one query a line (`#`
 * comments; of a line with tabs, the last field), searched WARMUP times
 * untimed, then PASSES times, each pass timing every query ranked only
 * (searcher/index-engine.ts rankVersion: evaluation, totals, top-k,
 * facets), then every query searched whole (searchVersion: with the hits'
 * cards and snippets). Prints {"rankMs": […], "searchMs": […], "zeroHits": N,
 * "peakRss": bytes} on one line.
 */

import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { cacheSizes } from '../searcher/config.js';
import type { SearchRequest } from '../searcher/engine.js';
import { rankVersion, searchVersion } from '../searcher/index-engine.js';
import { CURRENT, currentVersion, indexDirectory } from '../common/index/layout.js';
import { IndexVersion } from '../searcher/index-version.js';
import { siteCaps } from '../searcher/result-caps.js';
import { takenDownCards } from '../searcher/takedowns.js';
import { TakedownFile, takedownFilePath } from '../common/takedowns.js';
import { QueryError, parseQuery, type QueryNode } from '../searcher/query.js';
import { Synonyms } from '../searcher/synonyms.js';
import { explanationLines } from '../searcher/explain.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

function count(name: string, max: number) {
  return (text: string): number => {
    if (!/^\d{1,7}$/.test(text) || Number(text) > max) throw new SherlockError('SHERLOCK_USAGE', `${name}: expected a whole number up to ${max}, not ${JSON.stringify(text)}`);
    return Number(text);
  };
}

/** A snippet's HTML as terminal text: marks dropped, character references decoded. */
function snippetText(html: string): string {
  return html.replace(/<\/?mark>/g, '').replace(/&#(\d+);/g, (_m, code: string) => String.fromCodePoint(Number(code)));
}

function parsed(q: string): QueryNode {
  try {
    return parseQuery(q);
  } catch (err) {
    if (err instanceof QueryError) throw new SherlockError('SHERLOCK_USAGE', `bad query: ${err.message}`);
    throw err;
  }
}

/** The version `current` names under the state directory, opened with the configured caches, the takedowns in force hidden and the site rules' result caps kept as the searcher does. */
function openCurrent(state: string, globals: GlobalOptions): IndexVersion {
  const indexDir = indexDirectory(resolve(state));
  const target = currentVersion(indexDir);
  if (target === undefined) {
    throw new SherlockError('SHERLOCK_NOT_FOUND', `no index version in ${indexDir}: run sherlock index build`, { file: join(indexDir, CURRENT) });
  }
  const { config, rules } = loadSettings(globals);
  const version = IndexVersion.open(resolve(indexDir, target), basename(target), cacheSizes(config.searcher));
  version.takenDown = takenDownCards(version, new TakedownFile(takedownFilePath(resolve(state))).current());
  version.siteCaps = siteCaps(version, rules);
  return version;
}

/** --bench-queries: the query set timed in this process, ranked only and whole. */
async function benchQueries(version: IndexVersion, file: string, passes: number, warmup: number): Promise<void> {
  const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const requests: SearchRequest[] = lines.map((line) => ({ query: parsed(line.slice(line.lastIndexOf('\t') + 1)), offset: 0, limit: 10, filters: {} }));
  const signal = new AbortController().signal;
  let zeroHits = 0;
  for (let pass = 0; pass < warmup; pass++) {
    for (const request of requests) {
      const result = await searchVersion(version, request, signal);
      if (pass === 0 && result.hits.length === 0) zeroHits += 1;
    }
  }
  const rankMs: number[] = [];
  const searchMs: number[] = [];
  // Ranked and whole in passes of their own: a whole search right after the
  // same query ranked would find its chains and cards fresh in the processor's cache.
  for (let pass = 0; pass < passes; pass++) {
    for (const request of requests) {
      const started = performance.now();
      await rankVersion(version, request, signal);
      rankMs.push(performance.now() - started);
    }
    for (const request of requests) {
      const started = performance.now();
      await searchVersion(version, request, signal);
      searchMs.push(performance.now() - started);
    }
  }
  printJson({ rankMs, searchMs, zeroHits, peakRss: process.resourceUsage().maxRSS * 1024 });
}

interface SearchOptions {
  state?: string;
  limit: number;
  offset: number;
  json?: boolean;
  explain?: boolean;
  sort: 'relevance' | 'date';
  benchQueries?: string;
  passes: number;
  warmup: number;
}

export function registerSearch(program: Command): void {
  program
    .command('search')
    .description('one query on the current index version (the query language of the search page)')
    .argument('[query...]', 'the query; several arguments are joined with spaces')
    .option('--state <dir>', STATE_HELP)
    .option('--limit <n>', 'hits to print, 1–100', count('--limit', 100), 10)
    .option('--offset <n>', 'hits to skip, 0–1000', count('--offset', 1000), 0)
    .option('--json', 'print the result as one JSON object (the API\'s result fields)')
    .option('--explain', 'print with each hit the parts of its score (docs/search.md "Explain")')
    .addOption(new Option('--sort <order>', 'relevance, or date (newest first)').choices(['relevance', 'date']).default('relevance'))
    .addOption(new Option('--bench-queries <file>').hideHelp())
    .addOption(new Option('--passes <n>').argParser(count('--passes', 1000)).default(3).hideHelp())
    .addOption(new Option('--warmup <n>').argParser(count('--warmup', 1000)).default(1).hideHelp())
    .action(
      action(async (words: string[], opts: SearchOptions, cmd: Command) => {
        if (opts.limit < 1) throw new SherlockError('SHERLOCK_USAGE', '--limit: at least 1');
        const globals = cmd.optsWithGlobals<GlobalOptions>();
        if (opts.benchQueries !== undefined) {
          const version = openCurrent(stateDir(opts), globals);
          try {
            await benchQueries(version, opts.benchQueries, opts.passes, opts.warmup);
          } finally {
            version.retire();
          }
          return;
        }
        if (words.length === 0) throw new SherlockError('SHERLOCK_USAGE', 'a query is needed');
        const { synonyms_file: synonymsFile } = loadSettings(globals).config.searcher;
        const query = (synonymsFile === '' ? Synonyms.NONE : Synonyms.load(synonymsFile)).apply(parsed(words.join(' ')));
        const version = openCurrent(stateDir(opts), globals);
        try {
          const started = performance.now();
          const request = { query, offset: opts.offset, limit: opts.limit, filters: {}, sort: opts.sort, ...(opts.explain === true ? { explain: true } : {}) };
          const result = await searchVersion(version, request, new AbortController().signal);
          const took_ms = Math.round((performance.now() - started) * 10) / 10;
          if (opts.json === true) {
            printJson({ index: version.name, took_ms, ...result });
            return;
          }
          print(`${result.total.relation === 'gte' ? 'at least ' : ''}${result.total.value} found in ${version.name} (${took_ms} ms)`);
          result.hits.forEach((hit, i) => {
            print(`\n${opts.offset + i + 1}. ${hit.title}\n   ${hit.url}\n   ${snippetText(hit.snippet)}`);
            for (const line of hit.explain === undefined ? [] : explanationLines(hit.explain)) print(`   ${line}`);
          });
        } finally {
          version.retire();
        }
      }),
    );
}
