import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { z } from 'zod';
import { duration, loadConfig, size } from '../../common/config.js';
import { isSherlockError, SherlockError } from '../../common/errors.js';
import { scratchDir } from '../helpers/paths.js';

const schema = z
  .object({
    gatherer: z
      .object({
        min_delay: duration({ min: '100ms' }).prefault('5s'),
        max_body_size: size().prefault('10MiB'),
        max_connections: z.number().int().min(1).default(32),
        allow_private_addresses: z.boolean().default(false),
        user_agent: z.string().default('sherlock'),
        seeds: z.array(z.string()).default([]),
      })
      .strict()
      .prefault({}),
    shepherd: z.object({ scope: z.enum(['host', 'domain', 'any']).default('host') }).strict().prefault({}),
  })
  .strict();

/** A config directory with sherlock.toml and optional conf.d drop-ins. */
function configDir(t: test.TestContext, main: string, dropins: Record<string, string> = {}): string {
  const dir = scratchDir(t, 'sherlock-config-');
  writeFileSync(join(dir, 'sherlock.toml'), main);
  if (Object.keys(dropins).length > 0) mkdirSync(join(dir, 'conf.d'));
  for (const [name, text] of Object.entries(dropins)) writeFileSync(join(dir, 'conf.d', name), text);
  return join(dir, 'sherlock.toml');
}

function configError(run: () => unknown): SherlockError {
  try {
    run();
  } catch (err) {
    assert.ok(isSherlockError(err), `expected a SherlockError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a config error');
}

test('defaults come from the schema, typed: durations in ms, sizes in bytes', (t) => {
  const { config, leaves, files } = loadConfig(schema, { env: { CONFIGURATION_DIRECTORY: scratchDir(t) } });
  assert.deepEqual(files, []);
  assert.equal(config.gatherer.min_delay, 5000);
  assert.equal(config.gatherer.max_body_size, 10 * 2 ** 20);
  assert.equal(config.shepherd.scope, 'host');
  assert.deepEqual(leaves.get('gatherer.min_delay'), { value: '5s', source: 'default' });
});

test('layers apply in order: file, conf.d by name, environment, --set', (t) => {
  const file = configDir(t, '# main\n[gatherer]\nmin_delay = "1s"\nmax_connections = 4\nuser_agent = "file"\n', {
    '20-late.toml': '[gatherer]\nmax_connections = 6\n',
    '10-early.toml': '\n[gatherer]\nmax_connections = 5\nallow_private_addresses = true\n',
    'ignored.txt': '[gatherer]\nmax_connections = 99\n',
  });
  const { config, leaves, files } = loadConfig(schema, {
    file,
    env: { SHERLOCK_GATHERER__USER_AGENT: 'env', SHERLOCK_SHEPHERD__SCOPE: 'domain', SHERLOCK_SHARED: '/not/config' },
    sets: ['gatherer.user_agent=set', 'gatherer.seeds=a, b'],
  });
  assert.equal(files.length, 3);
  assert.equal(config.gatherer.min_delay, 1000);
  assert.equal(config.gatherer.max_connections, 6);
  assert.equal(config.gatherer.allow_private_addresses, true);
  assert.equal(config.gatherer.user_agent, 'set');
  assert.deepEqual(config.gatherer.seeds, ['a', 'b']);
  assert.equal(config.shepherd.scope, 'domain');
  assert.equal(leaves.get('gatherer.min_delay')?.source, `${file}:3`);
  assert.equal(leaves.get('gatherer.max_connections')?.source, files[2] + ':2');
  assert.equal(leaves.get('gatherer.allow_private_addresses')?.source, files[1] + ':4');
  assert.equal(leaves.get('shepherd.scope')?.source, 'env SHERLOCK_SHEPHERD__SCOPE');
  assert.equal(leaves.get('gatherer.user_agent')?.source, '--set');
});

test('dotted keys and quoted keys are located for error messages', (t) => {
  const file = configDir(t, 'gatherer.max_connections = 2\n\n[shepherd]\n"scope" = "nowhere"\n');
  const err = configError(() => loadConfig(schema, { file }));
  assert.equal(err.message, `shepherd.scope: Invalid option: expected one of "host"|"domain"|"any", got "nowhere" (from ${file}:4)`);
});

test('a bad value names the key, the value and the file:line it came from', (t) => {
  const file = configDir(t, '[gatherer]\nuser_agent = "x"\nmin_delay = "fast"\n');
  const err = configError(() => loadConfig(schema, { file }));
  assert.equal(err.code, 'SHERLOCK_BAD_CONFIG');
  assert.equal(err.message, `gatherer.min_delay: expected a duration like "2s", "500ms" or "1h30m", got "fast" (from ${file}:3)`);
  assert.equal(err.place.key, 'gatherer.min_delay');
  assert.equal(err.message.includes('\n'), false);
});

test('bounds on durations and sizes are enforced', (t) => {
  const err = configError(() => loadConfig(schema, { sets: ['gatherer.min_delay=10ms'] }));
  assert.match(err.message, /^gatherer\.min_delay: expected a duration of at least 100ms, got "10ms" \(from --set\)$/);
  const bad = configError(() => loadConfig(schema, { env: { SHERLOCK_GATHERER__MAX_BODY_SIZE: 'huge' }, file: configDir(t, '') }));
  assert.match(bad.message, /^gatherer\.max_body_size: expected a size like .*, got "huge" \(from env SHERLOCK_GATHERER__MAX_BODY_SIZE\)$/);
});

test('unknown keys are errors with a did-you-mean hint', (t) => {
  const file = configDir(t, '[gatherer]\nmin_dealy = "2s"\n');
  assert.equal(
    configError(() => loadConfig(schema, { file })).message,
    `gatherer.min_dealy: unknown key, did you mean gatherer.min_delay? (from ${file}:2)`,
  );
  assert.equal(
    configError(() => loadConfig(schema, { file: configDir(t, '[gatherr]\nx = 1\n') })).message.startsWith('gatherr.x: unknown key'),
    true,
  );
  assert.equal(
    configError(() => loadConfig(schema, { env: { SHERLOCK_SHEPERD__SCOPE: 'any' } })).message,
    'sheperd.scope: unknown key, did you mean shepherd.scope? (from env SHERLOCK_SHEPERD__SCOPE)',
  );
});

test('wrong types from a file are rejected; text from env and --set is converted by the leaf type', (t) => {
  const file = configDir(t, '[gatherer]\nmax_connections = "many"\n');
  assert.match(configError(() => loadConfig(schema, { file })).message, /^gatherer\.max_connections: .*expected number.*, got "many"/);
  const { config } = loadConfig(schema, {
    file: configDir(t, ''),
    env: { SHERLOCK_GATHERER__MAX_CONNECTIONS: '7' },
    sets: ['gatherer.allow_private_addresses=true'],
  });
  assert.equal(config.gatherer.max_connections, 7);
  assert.equal(config.gatherer.allow_private_addresses, true);
  assert.match(
    configError(() => loadConfig(schema, { sets: ['gatherer.allow_private_addresses=yes'] })).message,
    /^gatherer\.allow_private_addresses: .*, got "yes" \(from --set\)$/,
  );
});

test('TOML syntax errors give file, line and column on one line', (t) => {
  const file = configDir(t, '[gatherer]\nmin_delay = "2s\n');
  const err = configError(() => loadConfig(schema, { file }));
  assert.equal(err.code, 'SHERLOCK_BAD_CONFIG');
  assert.match(err.message, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:\\d+: TOML syntax error: `));
  assert.equal(err.message.includes('\n'), false);
});

test('a missing explicit config file is a config error; --set without = is a usage error', () => {
  const err = configError(() => loadConfig(schema, { file: '/nonexistent/sherlock.toml' }));
  assert.equal(err.code, 'SHERLOCK_BAD_CONFIG');
  assert.equal(err.message, '/nonexistent/sherlock.toml: cannot read config file: no such file');
  assert.equal(configError(() => loadConfig(schema, { sets: ['gatherer.min_delay'] })).code, 'SHERLOCK_USAGE');
});

test('$CONFIGURATION_DIRECTORY supplies the file and its conf.d when --config is absent', (t) => {
  const file = configDir(t, '[shepherd]\nscope = "any"\n', { 'a.toml': '[gatherer]\nmax_connections = 3\n' });
  const { config, files } = loadConfig(schema, { env: { CONFIGURATION_DIRECTORY: file.replace(/\/sherlock\.toml$/, '') } });
  assert.equal(config.shepherd.scope, 'any');
  assert.equal(config.gatherer.max_connections, 3);
  assert.equal(files.length, 2);
});

test('a value where a table belongs is named as such', (t) => {
  const file = configDir(t, 'gatherer = 5\n');
  assert.equal(
    configError(() => loadConfig(schema, { file })).message,
    `gatherer: expected a table of settings, not a value (from ${file}:1)`,
  );
});
