/**
 * The benchmark corpus: real HTML documentation from Debian packages that no
 * one on the team wrote, in three nested sets, and how it is cut into loopback
 * hosts. The harness installs the packages itself (`apt-get install`, skipped
 * when present) and fails with a clear message when a document root or entry
 * page is missing.
 *
 * Sets (each contains the one before):
 *   small  — postgresql-doc-15                                   (~1,170 pages; --quick, CI)
 *   medium — + python3.11-doc, linux-doc-6.1, debian-handbook    (~5,000 pages; the default)
 *   large  — + rust-doc, openjdk-17-doc, cppreference-doc-en-html,
 *              python-scipy-doc, python-pandas-doc, erlang-doc  (~64,000 pages; --large)
 *
 * Host addresses are assigned in the order below, so a host has the same
 * address in every set that contains it.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Behaviour, HostSpec, SiteLayout } from './site.js';

export type SetName = 'small' | 'medium' | 'large';
export const SET_NAMES: readonly SetName[] = ['small', 'medium', 'large'];

interface HostPlan {
  readonly name: string;
  readonly owns: readonly string[];
  readonly entry: string;
  readonly disallow: readonly string[] | undefined;
  readonly crawlDelay?: number;
  readonly behaviour?: Behaviour;
}

export interface PackagePlan {
  readonly pkg: string;
  readonly set: SetName;
  /** Candidate document roots, first existing wins (Debian moved some between releases). */
  readonly roots: readonly string[];
  /** The package's hosts; the first has empty `owns` (the default owner). */
  readonly hosts: readonly HostPlan[];
}

const SPHINX_PRIVATE = ['/_sources/', '/_downloads/', '/_images/', '/_static/'];

/** Every package of the corpus and the hosts cut from it. */
export const PACKAGES: readonly PackagePlan[] = [
  {
    pkg: 'postgresql-doc-15',
    set: 'small',
    roots: ['/usr/share/doc/postgresql-doc-15/html'],
    hosts: [
      { name: 'postgresql', owns: [], entry: '/index.html', disallow: ['/release-', '/bookindex.html'] },
      { name: 'postgresql-sql', owns: ['/sql-'], entry: '/sql-commands.html', disallow: ['/sql-drop'] },
      { name: 'postgresql-catalogs', owns: ['/catalog', '/view-', '/infoschema'], entry: '/catalogs.html', disallow: [] },
      { name: 'postgresql-spi', owns: ['/spi'], entry: '/spi.html', disallow: [], behaviour: 'slow' },
      { name: 'postgresql-clients', owns: ['/libpq', '/ecpg'], entry: '/libpq.html', disallow: [], behaviour: 'flaky' },
      { name: 'postgresql-indexam', owns: ['/brin'], entry: '/brin.html', disallow: [], crawlDelay: 0.1 },
      { name: 'postgresql-pl', owns: ['/plperl', '/pltcl', '/plpython', '/plpgsql'], entry: '/plpgsql.html', disallow: undefined },
    ],
  },
  {
    pkg: 'python3.11-doc',
    set: 'medium',
    roots: ['/usr/share/doc/python3.11/html'],
    hosts: [
      { name: 'python', owns: [], entry: '/index.html', disallow: [...SPHINX_PRIVATE, '/genindex-'] },
      { name: 'python-library', owns: ['/library/'], entry: '/library/index.html', disallow: undefined },
    ],
  },
  {
    pkg: 'linux-doc-6.1',
    set: 'medium',
    roots: ['/usr/share/doc/linux-doc-6.1/html'],
    hosts: [
      { name: 'linux', owns: [], entry: '/index.html', disallow: [...SPHINX_PRIVATE, '/translations/zh_TW/'] },
      { name: 'linux-userspace-api', owns: ['/userspace-api/'], entry: '/userspace-api/index.html', disallow: ['/userspace-api/media/dvb/'] },
      { name: 'linux-admin-guide', owns: ['/admin-guide/'], entry: '/admin-guide/index.html', disallow: [] },
      { name: 'linux-driver-api', owns: ['/driver-api/'], entry: '/driver-api/index.html', disallow: [], behaviour: 'slow' },
      { name: 'linux-networking', owns: ['/networking/'], entry: '/networking/index.html', disallow: [] },
      { name: 'linux-hwmon', owns: ['/hwmon/'], entry: '/hwmon/index.html', disallow: [], behaviour: 'flaky' },
    ],
  },
  {
    pkg: 'debian-handbook',
    set: 'medium',
    roots: ['/usr/share/doc/debian-handbook/html/en-US'],
    hosts: [{ name: 'debian-handbook', owns: [], entry: '/index.html', disallow: ['/Common_Content/'] }],
  },
  {
    pkg: 'rust-doc',
    set: 'large',
    roots: ['/usr/share/doc/rust-doc/html'],
    hosts: [
      { name: 'rust', owns: [], entry: '/index.html', disallow: ['/src/'] },
      { name: 'rust-core', owns: ['/core/'], entry: '/core/index.html', disallow: [] },
      { name: 'rust-std', owns: ['/std/', '/alloc/'], entry: '/std/index.html', disallow: [] },
    ],
  },
  {
    pkg: 'openjdk-17-doc',
    set: 'large',
    roots: ['/usr/share/doc/openjdk-17-jre-headless', '/usr/share/doc/openjdk-17-doc'],
    hosts: [
      { name: 'openjdk', owns: [], entry: '/api/index.html', disallow: ['/api/src-html/', '/legal/'] },
      { name: 'openjdk-base', owns: ['/api/java.base/'], entry: '/api/java.base/module-summary.html', disallow: [] },
    ],
  },
  {
    pkg: 'cppreference-doc-en-html',
    set: 'large',
    roots: ['/usr/share/cppreference/doc/html'],
    hosts: [
      { name: 'cppreference', owns: [], entry: '/en/index.html', disallow: [] },
      { name: 'cppreference-c', owns: ['/en/c/', '/en/c.html'], entry: '/en/c.html', disallow: [] },
    ],
  },
  {
    pkg: 'python-scipy-doc',
    set: 'large',
    roots: ['/usr/share/doc/python-scipy-doc/html'],
    hosts: [{ name: 'scipy', owns: [], entry: '/index.html', disallow: SPHINX_PRIVATE }],
  },
  {
    pkg: 'python-pandas-doc',
    set: 'large',
    roots: ['/usr/share/doc/python-pandas-doc/html'],
    hosts: [{ name: 'pandas', owns: [], entry: '/index.html', disallow: SPHINX_PRIVATE }],
  },
  {
    pkg: 'erlang-doc',
    set: 'large',
    roots: ['/usr/share/doc/erlang-doc'],
    hosts: [{ name: 'erlang', owns: [], entry: '/doc/index.html', disallow: [] }],
  },
];

/** Packages of a set (a set includes the smaller ones). */
export function packagesOf(set: SetName): PackagePlan[] {
  const rank = SET_NAMES.indexOf(set);
  return PACKAGES.filter((p) => SET_NAMES.indexOf(p.set) <= rank);
}

/** Loopback address of the i-th host (0-based): 127.0.0.2, 127.0.0.3, … (127.0.0.1 is the hub). */
export function hostAddress(index: number): string {
  const n = index + 2;
  if (n > 254) throw new Error(`too many benchmark hosts (${n})`);
  return `127.0.0.${n}`;
}

/** Debian packages the harness needs besides the corpus. */
export const TOOL_PACKAGES = ['wget', 'time', 'liblucene8-java'] as const;
export const OPTIONAL_TOOL_PACKAGES = ['python3-xapian'] as const;

export function isInstalled(pkg: string): boolean {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

/**
 * Installs the Debian packages that are missing, with the ordinary client.
 * Returns the ones it installed. Throws with apt's last lines on failure.
 */
export function ensurePackages(pkgs: readonly string[], log: (line: string) => void): string[] {
  const missing = pkgs.filter((p) => !isInstalled(p));
  if (missing.length === 0) return [];
  log(`apt-get install ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = (): ReturnType<typeof spawnSync> =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env, encoding: 'utf8', timeout: 1_800_000 });
  let r = install();
  if (r.status !== 0) {
    // A fresh machine may have no package lists yet.
    spawnSync('apt-get', ['update'], { env, encoding: 'utf8', timeout: 600_000 });
    r = install();
  }
  if (r.status !== 0) {
    const tail = String(r.stderr ?? '').trim().split('\n').slice(-5).join('\n');
    throw new Error(`apt-get install ${missing.join(' ')} failed (status ${r.status}):\n${tail}`);
  }
  return missing;
}

export function packageVersion(pkg: string): string {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** Finds each package's document root and entry pages; throws naming what is missing. */
export function buildLayout(set: SetName, port: number): SiteLayout {
  const hosts: HostSpec[] = [];
  let index = 0;
  for (const plan of PACKAGES) {
    const inSet = packagesOf(set).includes(plan);
    for (const h of plan.hosts) {
      const address = hostAddress(index++);
      if (!inSet) continue;
      const root = plan.roots.find((r) => existsSync(r) && statSync(r).isDirectory());
      if (root === undefined) {
        throw new Error(`${plan.pkg}: no document root at ${plan.roots.join(' or ')} (is the package installed?)`);
      }
      const entryFile = join(root, h.entry);
      if (!existsSync(entryFile)) throw new Error(`${plan.pkg}: entry page ${entryFile} for host ${h.name} is missing`);
      hosts.push({
        name: h.name,
        address,
        pkg: plan.pkg,
        root,
        owns: h.owns,
        entry: h.entry,
        disallow: h.disallow,
        ...(h.crawlDelay === undefined ? {} : { crawlDelay: h.crawlDelay }),
        behaviour: h.behaviour ?? 'normal',
      });
    }
  }
  return { port, hosts };
}

/** Every HTML file under a root, as site paths ("/a/b.html"), sorted; follows directory symlinks once. */
export function htmlFiles(root: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = (dir: string, depth: number): void => {
    if (depth > 32) return;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = join(dir, name);
      let st;
      try {
        st = statSync(full);
      } catch {
        continue; // dangling symlink
      }
      if (st.isDirectory()) {
        const key = `${st.dev}:${st.ino}`;
        if (seen.has(key)) continue;
        seen.add(key);
        walk(full, depth + 1);
      } else if (st.isFile() && name.endsWith('.html')) {
        out.push('/' + relative(root, full).split('\\').join('/'));
      }
    }
  };
  walk(root, 0);
  return out.sort();
}
