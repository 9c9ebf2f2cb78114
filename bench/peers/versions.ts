/** The installed version of an npm package, for the peers' names in the report; undefined when it is not installed. */

import { createRequire } from 'node:module';

export function packageVersion(name: string): string | undefined {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return undefined;
  }
}
