/**
 * `sherlock config check|dump`: validate the layered config without starting
 * anything, and print every effective value with the layer it came from.
 */

import type { Command } from 'commander';
import { action, print, printJson } from './command.js';
import { loadSettings, type GlobalOptions } from './settings.js';

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
}

function tomlValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(', ')}]`;
  // JSON string escapes are valid TOML basic-string escapes.
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
