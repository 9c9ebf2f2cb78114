/** The installed version of an npm package, for the peers' names in the report; undefined when it is not installed. */

import { createRequire } from 'node:module';
import type { Availability } from '../parts.js';

export function packageVersion(name: string): string | undefined {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return undefined;
  }
}

/** A peer's availability when it needs npm package `name`; `install` says how to get it. */
export function installed(name: string, install: string): Availability {
  return packageVersion(name) === undefined ? { status: 'unavailable', reason: `${name} not installed (${install})` } : true;
}
