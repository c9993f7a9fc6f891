/**
 * The resident hook endpoint's pure parts: the forwarder stays a small process (its static imports
 * are Node's own, through builtin.ts, and two import-free modules of warden), the endpoint file
 * (0600, a token kept across installs, refused when malformed), the bearer check, and which Host
 * headers name this machine.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { DEFAULT_ENDPOINT, endpointFile, ensureEndpoint, readEndpoint, rotateToken, tokenMatches } from '../../src/hooks/endpoint-file.js';
import { loopbackHost } from '../../src/serve/hooks.js';

const SRC = resolve(import.meta.dirname, '../../src');

/** The modules a file imports for their values (not `import type`), as written. */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'([^']+)';/gms), ...text.matchAll(/^import\s+'([^']+)';/gm)].map((m) => m[1]!);
}

describe('the forwarder loads almost nothing', () => {
  test('its static imports are builtin.ts, the endpoint file and the terminal sanitizer, and those import nothing more', () => {
    const allowed = new Set(['hooks/builtin.ts', 'hooks/endpoint-file.ts', 'text/sanitize.ts']);
    const seen = new Set<string>();
    const visit = (rel: string) => {
      if (seen.has(rel)) return;
      seen.add(rel);
      for (const spec of valueImports(join(SRC, rel))) {
        // Node's modules only through builtin.ts (an ES import of node:http alone costs ~25 ms of CPU).
        expect(spec.startsWith('node:'), `${rel} imports ${spec} statically`).toBe(false);
        const target = join(dirname(rel), spec).replace(/\.js$/, '.ts');
        expect(allowed.has(target), `${rel} imports ${spec}`).toBe(true);
        visit(target);
      }
    };
    visit('hooks/forward.ts');
    expect([...seen].sort()).toEqual(['hooks/builtin.ts', 'hooks/endpoint-file.ts', 'hooks/forward.ts', 'text/sanitize.ts']);
  });
});

describe('the endpoint file', () => {
  let home: string;
  afterEach(() => rmSync(home, { recursive: true, force: true }));
  const env = () => ({ WARDEN_HOME: join(home, 'w'), HOME: home });

  test('created 0600 in a 0700 home with a fresh token; kept by the next ensure; moved by --endpoint, same token', async () => {
    home = mkdtempSync(join(tmpdir(), 'warden-endpoint-'));
    const a = await ensureEndpoint(env());
    expect(a).toMatchObject({ created: true, changed: true, endpoint: { url: `http://${DEFAULT_ENDPOINT}` } });
    expect(a.endpoint.token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(endpointFile(env())).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'w')).mode & 0o777).toBe(0o700);
    expect(await ensureEndpoint(env())).toEqual({ endpoint: a.endpoint, created: false, changed: false });
    const moved = await ensureEndpoint(env(), '127.0.0.1:9999');
    expect(moved).toEqual({ endpoint: { url: 'http://127.0.0.1:9999', token: a.endpoint.token }, created: false, changed: true });
    const rotated = await rotateToken(env());
    expect(rotated.url).toBe('http://127.0.0.1:9999');
    expect(rotated.token).not.toBe(a.endpoint.token);
    expect(readEndpoint(env())).toEqual(rotated);
  });

  test('a file that is not what warden writes reads as none (the hook then says it is not set up)', () => {
    home = mkdtempSync(join(tmpdir(), 'warden-endpoint-'));
    const file = endpointFile(env());
    expect(readEndpoint(env())).toBeNull();
    const ok = { url: 'http://127.0.0.1:8788', token: 'a'.repeat(64) };
    for (const bad of [
      'not json',
      JSON.stringify({ ...ok, token: 'short' }),
      JSON.stringify({ ...ok, token: 'A'.repeat(64) }),
      JSON.stringify({ ...ok, url: 'https://127.0.0.1:8788' }),
      JSON.stringify({ ...ok, url: 'http://127.0.0.1:8788/path' }),
      JSON.stringify({ url: ok.url }),
      'null',
    ]) {
      ensureDir(file);
      writeFileSync(file, bad);
      expect(readEndpoint(env()), bad).toBeNull();
    }
    writeFileSync(file, JSON.stringify(ok));
    expect(readEndpoint(env())).toEqual(ok);
  });
});

function ensureDir(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
}

test('the bearer check takes exactly the token', async () => {
  const t = 'b'.repeat(64);
  expect(await tokenMatches(`Bearer ${t}`, t)).toBe(true);
  expect(await tokenMatches(` Bearer ${t} `, t)).toBe(true);
  expect(await tokenMatches(undefined, t)).toBe(false);
  expect(await tokenMatches(t, t)).toBe(false);
  expect(await tokenMatches(`Bearer ${'c'.repeat(64)}`, t)).toBe(false);
  expect(await tokenMatches(`Bearer ${t}x`, t)).toBe(false);
  expect(await tokenMatches(`Basic ${t}`, t)).toBe(false);
});

test('a loopback Host is this machine by name or address, with any port; anything else is not', () => {
  for (const h of ['127.0.0.1:8788', '127.0.0.1', 'localhost:8788', 'LOCALHOST', '[::1]:8788', '127.1.2.3:1']) expect(loopbackHost(h), h).toBe(true);
  for (const h of [
    undefined,
    '',
    'evil.example',
    'evil.example:8788',
    '127.0.0.1.evil.example',
    'localhost.evil.example:8788',
    '0.0.0.0:8788',
    '[::]:8788',
    '10.0.0.1',
  ])
    expect(loopbackHost(h), String(h)).toBe(false);
});
