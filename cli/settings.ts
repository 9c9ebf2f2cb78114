/**
 * The whole sherlock.toml schema, put together from each part's own table, and
 * the one place the CLI loads it (applying [log] as it goes) together with the
 * site rules ([sites], common/site-rules.ts): a daemon that loads its settings
 * at start and on SIGHUP reads both, and a bad rule file refuses the reload as
 * a bad config file does.
 */

import { z } from 'zod';
import { loadConfig, type LoadedConfig } from '../common/config.js';
import { LEVELS, setLogLevel, type Level } from '../common/log.js';
import { SiteRules, siteRulesDir, sitesConfig } from '../common/site-rules.js';
import { gathererConfig } from '../gatherer/config.js';
import { indexerConfig } from '../indexer/config.js';
import { searcherConfig } from '../searcher/config.js';
import { shepherdConfig } from '../shepherd/config.js';

const logConfig = z
  .object({
    /** Events less important than this are not written (err, warning, notice, info, debug). */
    level: z.enum(Object.keys(LEVELS) as [Level, ...Level[]]).default('info'),
  })
  .strict();

export const sherlockConfig = z
  .object({
    log: logConfig.prefault({}),
    gatherer: gathererConfig.prefault({}),
    shepherd: shepherdConfig.prefault({}),
    indexer: indexerConfig.prefault({}),
    searcher: searcherConfig.prefault({}),
    sites: sitesConfig.prefault({}),
  })
  .strict();

export type SherlockConfig = z.output<typeof sherlockConfig>;

export interface GlobalOptions {
  config?: string;
  set?: string[];
}

export interface Settings extends LoadedConfig<SherlockConfig> {
  /** The site rules of [sites] dir. */
  rules: SiteRules;
}

export function loadSettings(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Settings {
  const loaded = loadConfig(sherlockConfig, { file: options.config, env, sets: options.set ?? [] });
  const rules = SiteRules.load(siteRulesDir(loaded.config.sites, loaded.files[0]));
  setLogLevel(loaded.config.log.level);
  return { ...loaded, rules };
}
