#!/usr/bin/env node
/**
 * The `sherlock` command: one binary, subcommands per part. Exit statuses:
 * 0 ok, 1 failure, 2 usage, 78 bad config (systemd's RestartPreventExitStatus).
 *
 * Each command's module is loaded only when that command runs (all of them
 * for help or an unknown name): loading every part's code cost about 0.4 s
 * of CPU at every start, paid by each daemon, test and script.
 */

import { Command, CommanderError, Option } from 'commander';
import { EXIT } from '../common/errors.js';

type Register = (program: Command) => void;

/** Every command, in the order help lists them, and where its module is. */
const COMMANDS: ReadonlyArray<readonly [string, () => Promise<Register>]> = [
  ['config', async () => (await import('./config.js')).registerConfig],
  ['arc', async () => (await import('./arc.js')).registerArc],
  ['bucket', async () => (await import('./bucket.js')).registerBucket],
  ['gatherer', async () => (await import('./gatherer.js')).registerGatherer],
  ['inject', async () => (await import('./inject.js')).registerInject],
  ['shepherd', async () => (await import('./shepherd.js')).registerShepherd],
  ['crawl', async () => (await import('./crawl.js')).registerCrawl],
  ['check', async () => (await import('./check.js')).registerCheck],
  ['export', async () => (await import('./export.js')).registerExport],
  ['import', async () => (await import('./import.js')).registerImport],
  ['index', async () => (await import('./index.js')).registerIndex],
  ['indexer', async () => (await import('./indexer.js')).registerIndexer],
  ['takedown', async () => (await import('./takedown.js')).registerTakedown],
  ['status', async () => (await import('./status.js')).registerStatus],
  ['nutch', async () => (await import('./nutch.js')).registerNutch],
  ['searcher', async () => (await import('./searcher.js')).registerSearcher],
  ['search', async () => (await import('./search.js')).registerSearch],
  ['demo', async () => (await import('./demo.js')).registerDemo],
  ['run', async () => (await import('./run.js')).registerRun],
];

/** Global options that take a value (the value is not the command's name). */
const VALUED = new Set(['--config', '--set']);

/** The command named on the command line: its first word that is neither an option nor an option's value. */
function commandName(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (VALUED.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

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

const name = commandName(process.argv.slice(2));
const chosen = COMMANDS.filter(([command]) => command === name);
for (const [, load] of chosen.length === 1 ? chosen : COMMANDS) (await load())(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (!(err instanceof CommanderError)) throw err;
  // Help and --version come through here too, with exit code 0.
  process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
