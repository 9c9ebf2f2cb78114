/**
 * `sherlock import nutch --state DIR PATH`: an Apache Nutch crawldb into the
 * URL database, so a Nutch crawl can go on in sherlock (docs/nutch.md;
 * exporter/nutch/import.ts reads it, the URL database's restore writes it).
 * URLs the database knows already are left as they are.
 */

import type { Command } from 'commander';
import { SherlockError } from '../common/errors.js';
import { logger } from '../common/log.js';
import { importCrawlDb, type ImportCounts } from '../exporter/nutch/import.js';
import { UrlDb } from '../shepherd/urldb.js';
import { STATE_HELP, action, print, printJson, stateDir } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

const log = logger('import');

export function registerImportNutch(imp: Command): void {
  imp
    .command('nutch')
    .description('an Apache Nutch crawldb into the URL database: URLs, states, fetch times, intervals, scores, signatures')
    .option('--state <dir>', STATE_HELP)
    .option('--crawldb <dir>', 'the crawldb (instead of PATH)')
    .option('--json', 'print the counts as one JSON object')
    .argument('[path]', 'a Nutch crawl directory, a crawldb, its current directory, or one part')
    .action(
      action((path: string | undefined, opts: { state?: string; crawldb?: string; json?: boolean }, cmd: Command) => {
        const source = path ?? opts.crawldb;
        if (source === undefined || (path !== undefined && opts.crawldb !== undefined)) throw new SherlockError('SHERLOCK_USAGE', 'give one crawldb: PATH or --crawldb DIR');
        const state = stateDir(opts);
        const config = loadSettings(cmd.optsWithGlobals<GlobalOptions>()).config;
        const db = UrlDb.open(state, config.shepherd);
        let counts: ImportCounts;
        try {
          counts = importCrawlDb(source, Math.floor(Date.now() / 1000), (rows) => db.restore(rows));
        } finally {
          db.close();
        }
        log.notice('crawldb imported', { ...counts });
        if (opts.json === true) printJson(counts);
        else print(`${counts.records} records from ${counts.parts} parts: ${counts.added} added, ${counts.known} known, ${counts.refused} refused (not a usable URL, or over a site's budget)`);
        return 0;
      }),
    );
}
