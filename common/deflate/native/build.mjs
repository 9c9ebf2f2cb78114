// `npm install`'s install step (package.json "install"): builds the optional
// libdeflate binding (binding.gyp, deflate.c) with node-gyp when libdeflate's
// header is there, and otherwise prints one line and builds nothing; sherlock
// then deflates with node:zlib (common/deflate/libdeflate.ts). It always exits 0: a
// failed build is reported, not fatal, so `npm install` / `npm ci` succeed
// with or without libdeflate-dev. SHERLOCK_NATIVE=0 skips the build.
// Plain JavaScript: it runs before `tsc` (the "prepare" step).

import { spawnSync } from 'node:child_process';

const NOTE = 'sherlock: the libdeflate binding is not built';
const LATER = 'sherlock uses node:zlib instead (same results, slower); for the faster path: apt-get install libdeflate-dev, then npm rebuild';

function skip(why) {
  console.log(`${NOTE} (${why}); ${LATER}`);
  process.exit(0);
}

if (process.env.SHERLOCK_NATIVE === '0') skip('SHERLOCK_NATIVE=0');

// Is <libdeflate.h> on the compiler's include path (CPATH, C_INCLUDE_PATH and CFLAGS count)?
const cc = process.env.CC || 'cc';
const probe = spawnSync(cc, [...(process.env.CFLAGS ?? '').split(/\s+/).filter(Boolean), '-E', '-x', 'c', '-'], {
  input: '#include <libdeflate.h>\n',
  stdio: ['pipe', 'ignore', 'ignore'],
});
if (probe.error !== undefined) skip(`no C compiler: ${cc}: ${probe.error.code ?? probe.error.message}`);
if (probe.status !== 0) skip('libdeflate.h not found');

// npm gives its bundled node-gyp's path to install scripts; node-gyp on PATH otherwise.
const gyp = process.env.npm_config_node_gyp;
const build = gyp ? spawnSync(process.execPath, [gyp, 'rebuild'], { stdio: 'inherit' }) : spawnSync('node-gyp', ['rebuild'], { stdio: 'inherit' });
if (build.error !== undefined || build.status !== 0) skip(`node-gyp rebuild failed: ${build.error?.message ?? `exit ${build.status ?? build.signal}`}, see above`);
console.log('sherlock: the libdeflate binding is built (build/Release/sherlock_deflate.node)');
