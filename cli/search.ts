/**
 * `sherlock search --state DIR [--json] [--limit N] [--offset N] QUERY`: one
 * query from the shell (DESIGN §2) on the version `state/index/current`
 * names, evaluated as the searcher does (searcher/index-engine.ts). Prints
 * the total and one block per hit (title, URL, snippet as text); `--json`
 * prints the result object of the WebSocket API. A query that does not parse
 * is a usage error (2) naming the character; no index version is a failure (1).
 */

import { readlinkSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { CURRENT, INDEX_DIR, searchVersion } from '../searcher/index-engine.js';
import { IndexVersion } from '../searcher/index-version.js';
import { QueryError, parseQuery } from '../searcher/query.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';

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

export function registerSearch(program: Command): void {
  program
    .command('search')
    .description('one query on the current index version (the query language of the search page)')
    .argument('<query...>', 'the query; several arguments are joined with spaces')
    .option('--state <dir>', STATE_HELP)
    .option('--limit <n>', 'hits to print, 1–100', count('--limit', 100), 10)
    .option('--offset <n>', 'hits to skip, 0–1000', count('--offset', 1000), 0)
    .option('--json', 'print the result as one JSON object (the API\'s result fields)')
    .action(
      action(async (words: string[], opts: { state?: string; limit: number; offset: number; json?: boolean }) => {
        if (opts.limit < 1) throw new SherlockError('SHERLOCK_USAGE', '--limit: at least 1');
        const q = words.join(' ');
        let query;
        try {
          query = parseQuery(q);
        } catch (err) {
          if (err instanceof QueryError) throw new SherlockError('SHERLOCK_USAGE', `bad query: ${err.message}`);
          throw err;
        }
        const indexDir = join(resolve(stateDir(opts)), INDEX_DIR);
        let target: string;
        try {
          target = readlinkSync(join(indexDir, CURRENT));
        } catch {
          throw new SherlockError('SHERLOCK_NOT_FOUND', `no index version in ${indexDir}: run sherlock index build`, { file: join(indexDir, CURRENT) });
        }
        const version = IndexVersion.open(resolve(indexDir, target), basename(target));
        try {
          const started = performance.now();
          const result = await searchVersion(version, { query, offset: opts.offset, limit: opts.limit, filters: {} }, new AbortController().signal);
          const took_ms = Math.round((performance.now() - started) * 10) / 10;
          if (opts.json === true) {
            printJson({ index: version.name, took_ms, ...result });
            return;
          }
          print(`${result.total.relation === 'gte' ? 'at least ' : ''}${result.total.value} found in ${version.name} (${took_ms} ms)`);
          result.hits.forEach((hit, i) => {
            print(`\n${opts.offset + i + 1}. ${hit.title}\n   ${hit.url}\n   ${snippetText(hit.snippet)}`);
          });
        } finally {
          version.retire();
        }
      }),
    );
}
