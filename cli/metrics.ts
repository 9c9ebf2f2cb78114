/**
 * What the daemon commands share for /metrics: a registry holding the
 * process figures and the build, and the admin listener on a part's
 * `admin_listen` address when one is set (common/service/metrics-listener.ts).
 */

import { readFileSync } from 'node:fs';
import { logger } from '../common/log.js';
import { serveMetrics, type MetricsListener } from '../common/service/metrics-listener.js';
import { Registry, registerProcessMetrics } from '../common/service/metrics.js';

const log = logger('metrics');

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export function daemonRegistry(): Registry {
  const registry = new Registry();
  registerProcessMetrics(registry, VERSION);
  return registry;
}

/** Serves `registry` on `listen` (the part's admin_listen, named by `key`); nothing when it is "". */
export async function adminListener(registry: Registry, listen: string, key: string): Promise<MetricsListener | undefined> {
  if (listen === '') return undefined;
  const listener = await serveMetrics(registry, listen);
  log.notice('metrics listening', { key, address: `http://${listener.address}/metrics` });
  return listener;
}
