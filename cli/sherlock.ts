#!/usr/bin/env node
/**
 * The `sherlock` command: one binary, subcommands per part. Exit statuses:
 * 0 ok, 1 failure, 2 usage, 78 bad config (systemd's RestartPreventExitStatus).
 */

import { Command, CommanderError, Option } from 'commander';
import { EXIT } from '../common/errors.js';
import { registerArc } from './arc.js';
import { registerBucket } from './bucket.js';
import { registerConfig } from './config.js';
import { registerCrawl } from './crawl.js';
import { registerGatherer } from './gatherer.js';
import { registerIndex } from './index.js';
import { registerIndexer } from './indexer.js';
import { registerInject } from './inject.js';
import { registerNutch } from './nutch.js';
import { registerSearcher } from './searcher.js';
import { registerSearch } from './search.js';
import { registerRun } from './run.js';
import { registerShepherd } from './shepherd.js';
import { registerStatus } from './status.js';
import { registerCheck } from './check.js';
import { registerExport } from './export.js';
import { registerDemo } from './demo.js';
import { registerImport } from './import-nutch.js';

const program = new Command('sherlock')
  .description('a self-hosted web search-engine appliance: crawl, archive, index, search, export')
  .version('0.1.0')
  .addOption(new Option('--config <file>', 'config file (default: $CONFIGURATION_DIRECTORY/sherlock.toml, /etc/sherlock/sherlock.toml)'))
  .addOption(
    new Option('--set <key=value>', 'override one config value; repeatable').argParser((value: string, previous: string[] = []) => [
      ...previous,
      value,
    ]),
  )
  .showHelpAfterError()
  .exitOverride();

registerConfig(program);
registerArc(program);
registerBucket(program);
registerGatherer(program);
registerInject(program);
registerShepherd(program);
registerCrawl(program);
registerCheck(program);
registerExport(program);
registerImport(program);
registerIndex(program);
registerIndexer(program);
registerStatus(program);
registerNutch(program);
registerSearcher(program);
registerSearch(program);
registerDemo(program);
registerRun(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (!(err instanceof CommanderError)) throw err;
  // Help and --version come through here too, with exit code 0.
  process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
