/**
 * `sherlock inject --state DIR FILE|-`: seed URLs into the URL database. The
 * input is first copied whole into the shepherd's inbox (shepherd/seed-inbox.ts);
 * then, when no shepherd holds the database, it is injected here and the
 * counts printed, else the running shepherd takes it at its next cycle. An
 * inject killed midway leaves its file in the inbox, and the next inject,
 * crawl or shepherd cycle finishes it.
 */

import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { logger } from '../common/log.js';
import { spoolSeeds } from '../shepherd/seed-inbox.js';
import { takeInboxIfFree, type InjectReport } from '../shepherd/shepherd.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('inject');

export function registerInject(program: Command): void {
  program
    .command('inject')
    .description('add seed URLs (one per line, # comments) to the URL database; they also set the crawl scope')
    .option('--state <dir>', STATE_HELP)
    .option('--json', 'print the counts as one JSON object')
    .argument('<file>', 'file of URLs, or - for standard input')
    .action(
      action(async (file: string, opts: { state?: string; json?: boolean }, cmd: Command) => {
        const state = stateDir(opts);
        const { config, rules } = loadSettings(cmd.optsWithGlobals<GlobalOptions>());
        const spooled = await spoolSeeds(state, seedInput(file), file);
        const report = takeInboxIfFree(state, config.shepherd, rules);
        if (report === undefined) {
          if (opts.json === true) printJson({ pending: spooled });
          else print(`a running shepherd holds the URL database; it injects ${spooled} at its next cycle`);
          return 0;
        }
        log.notice('seeds injected', { added: report.added, known: report.known, refused: report.refused });
        if (opts.json === true) printJson(report);
        else print(describeInject(report));
        return 0;
      }),
    );
}

/** The seeds named on a command line: a file, or standard input for `-`. */
export function seedInput(file: string): Readable {
  return file === '-' ? process.stdin : createReadStream(file);
}

/** "3 added, 1 known, 0 over a site's budget, 2 refused (scheme 1, length 1)". */
export function describeInject(report: InjectReport): string {
  const reasons = Object.entries(report.rejected);
  const refused = reasons.reduce((sum, [, n]) => sum + n, 0);
  const why = reasons.length === 0 ? '' : ` (${reasons.map(([reason, n]) => `${reason} ${n}`).join(', ')})`;
  return `${report.added} added, ${report.known} known, ${report.refused} over a site's budget, ${refused} refused${why}`;
}
