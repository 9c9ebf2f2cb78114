/**
 * The running gatherer's end of the control socket (common/gather/control.ts):
 * `pause`, `resume` and `status` applied to a Gatherer, and the persisted
 * pause flag honoured at start. The flag is read after the socket listens,
 * so a pause is either in the flag when it is read or arrives through the
 * socket: none is missed.
 */

import { readPauseFlag, serveControl, type ControlServer } from '../common/gather/control.js';
import { logger } from '../common/log.js';
import type { Gatherer } from './gatherer.js';

const log = logger('gatherer');

/** Serves the control socket for `gatherer` until closed; call before run(). */
export async function controlGatherer(gatherer: Gatherer, runtimeDir: string | undefined): Promise<ControlServer> {
  const server = await serveControl(gatherer.state, runtimeDir, (command) => {
    if (command === 'pause' && !gatherer.status().paused) {
      gatherer.pause();
      log.notice('paused: fetches in flight finish, no new ones start');
    } else if (command === 'resume' && gatherer.status().paused) {
      gatherer.resume();
      log.notice('resumed');
    }
    return { ok: true, ...gatherer.status() };
  });
  const since = readPauseFlag(gatherer.state);
  if (since !== undefined) {
    gatherer.pause();
    log.notice('paused since an earlier `sherlock crawl pause`; `sherlock crawl resume` goes on', { since });
  }
  return server;
}
