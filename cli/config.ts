/**
 * `sherlock config check|dump|reference`: validate the layered config without
 * starting anything, print every effective value with the layer it came
 * from, and print (or write into docs/operating.md) the generated reference
 * of every key (config-reference.ts).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { configReference, spliceReference, tomlValue } from './config-reference.js';
import { action, print, printJson } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

/** etc/sherlock.toml of the installed package (dist/cli/ is two levels down). */
const SHIPPED_TOML = join(fileURLToPath(new URL('../..', import.meta.url)), 'etc', 'sherlock.toml');

export function registerConfig(program: Command): void {
  const config = program.command('config').description('check or print the effective configuration');

  config
    .command('check')
    .description('validate config files, drop-ins, environment and --set; exit 78 on an error')
    .action(
      action((_opts: object, cmd: Command) => {
        const { files } = loadSettings(cmd.optsWithGlobals<GlobalOptions>());
        print(files.length === 0 ? 'config ok (defaults only, no file found)' : `config ok: ${files.join(', ')}`);
      }),
    );

  config
    .command('dump')
    .description('print every effective value as TOML, each with its source')
    .option('--json', 'print {key: {value, source}} instead')
    .action(
      action((opts: { json?: boolean }, cmd: Command) => {
        const { leaves } = loadSettings(cmd.optsWithGlobals<GlobalOptions>());
        if (opts.json === true) {
          printJson(Object.fromEntries(leaves));
          return;
        }
        let table = '';
        for (const [key, { value, source }] of [...leaves].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
          const dot = key.lastIndexOf('.');
          const [section, name] = [key.slice(0, dot), key.slice(dot + 1)];
          if (section !== table) {
            print(table === '' ? `[${section}]` : `\n[${section}]`);
            table = section;
          }
          print(`${name} = ${tomlValue(value)}  # ${source}`);
        }
      }),
    );

  config
    .command('reference')
    .description('print the reference of every config key (defaults from the schemas, words from etc/sherlock.toml), as Markdown')
    .option('--toml <file>', 'the shipped sherlock.toml whose comments describe the keys', SHIPPED_TOML)
    .option('--write <file>', 'put it between the config-reference markers of this file instead')
    .action(
      action((opts: { toml: string; write?: string }) => {
        const reference = configReference(readFileSync(opts.toml, 'utf8'), opts.toml);
        if (opts.write === undefined) {
          print(reference);
          return;
        }
        writeFileSync(opts.write, spliceReference(readFileSync(opts.write, 'utf8'), reference, opts.write));
        print(`config reference written into ${opts.write}`);
      }),
    );
}
