/**
 * The production shape (docker-compose.yml, Dockerfile, .dockerignore, deploy/) checked without a
 * Docker engine: the compose structure that matters (services, start-up order, pinned images,
 * addresses, ports, volumes, secrets), the Dockerfile against what `tsc -p .` really produces, and
 * the one-shot job scripts run for real under /bin/sh against stand-in `temporal`,
 * `temporal-sql-tool` and `nc` commands (they test the scripts' idempotency logic, not Temporal).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTES } from '../../src/domain/contract/search-attributes.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

// ---------------------------------------------------------------------------------------------
// docker-compose.yml
// ---------------------------------------------------------------------------------------------

interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  depends_on?: string[] | Record<string, { condition?: string; required?: boolean }>;
  environment?: Record<string, string | number | boolean | null> | string[];
  env_file?: string | Array<string | { path: string; required?: boolean }>;
  ports?: Array<string | { target: number; published?: string | number; host_ip?: string }>;
  volumes?: Array<string | { type: string; source?: string; target: string; read_only?: boolean }>;
  healthcheck?: { test: string | string[]; disable?: boolean };
  entrypoint?: string | string[];
  command?: string | string[];
  restart?: string;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = parse(read('docker-compose.yml')) as Compose;
const services = compose.services;

const EXPECTED_SERVICES = [
  'postgresql',
  'temporal-schema',
  'temporal',
  'temporal-create-namespace',
  'warden-search-attributes',
  'temporal-ui',
  'warden-worker',
];
const ONE_SHOT = ['temporal-schema', 'temporal-create-namespace', 'warden-search-attributes'];

function env(svc: Service): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(svc.environment)) {
    for (const e of svc.environment) {
      const i = e.indexOf('=');
      out[i < 0 ? e : e.slice(0, i)] = i < 0 ? '' : e.slice(i + 1);
    }
  } else {
    for (const [k, v] of Object.entries(svc.environment ?? {})) out[k] = v == null ? '' : String(v);
  }
  return out;
}

function dependsOn(svc: Service): Record<string, string> {
  const d = svc.depends_on;
  if (!d) return {};
  if (Array.isArray(d)) return Object.fromEntries(d.map((n) => [n, 'service_started']));
  return Object.fromEntries(Object.entries(d).map(([n, v]) => [n, v?.condition ?? 'service_started']));
}

/** `${VAR:-default}` → default, `${VAR}` → '' (what compose uses when nothing is set). */
function interpolateDefaults(s: string): string {
  return s.replace(/\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g, (_m, _name, def) => def ?? '');
}

function parsePort(p: string | { target: number; published?: string | number; host_ip?: string }) {
  if (typeof p !== 'string') return { hostIp: p.host_ip ?? '', published: String(p.published ?? ''), target: String(p.target) };
  const [spec] = p.split('/');
  const parts = spec.split(':');
  const target = parts.pop()!;
  const published = parts.pop() ?? '';
  return { hostIp: parts.join(':'), published, target };
}

function command(svc: Service): string[] {
  const c = svc.command ?? [];
  return typeof c === 'string' ? c.split(/\s+/).filter(Boolean) : c.map(String);
}

describe('docker-compose.yml', () => {
  test('has the Temporal cluster, its jobs, the UI and the worker', () => {
    expect(Object.keys(services).sort()).toEqual([...EXPECTED_SERVICES].sort());
  });

  test('every depends_on names an existing service, with a condition that service can meet', () => {
    const valid = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);
    for (const [name, svc] of Object.entries(services)) {
      for (const [dep, condition] of Object.entries(dependsOn(svc))) {
        expect(services, `${name} depends on unknown ${dep}`).toHaveProperty([dep]);
        expect(valid.has(condition), `${name} -> ${dep}: ${condition}`).toBe(true);
        if (condition === 'service_healthy') {
          expect(services[dep].healthcheck?.test, `${name} waits for ${dep} to be healthy, but ${dep} has no healthcheck`).toBeTruthy();
        }
        if (condition === 'service_completed_successfully') {
          expect(ONE_SHOT, `${name} waits for ${dep} to complete, but ${dep} is not a one-shot job`).toContain(dep);
        }
      }
    }
  });

  test('the start-up order has no cycle and runs schema -> server -> namespace -> search attributes -> worker', () => {
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (n: string, path: string[]) => {
      if (state.get(n) === 'done') return;
      expect(state.get(n), `dependency cycle: ${[...path, n].join(' -> ')}`).not.toBe('visiting');
      state.set(n, 'visiting');
      for (const d of Object.keys(dependsOn(services[n]))) visit(d, [...path, n]);
      state.set(n, 'done');
    };
    for (const n of Object.keys(services)) visit(n, []);

    expect(dependsOn(services['temporal-schema'])).toMatchObject({ postgresql: 'service_healthy' });
    expect(dependsOn(services.temporal)).toMatchObject({
      postgresql: 'service_healthy',
      'temporal-schema': 'service_completed_successfully',
    });
    expect(dependsOn(services['temporal-create-namespace'])).toMatchObject({ temporal: 'service_healthy' });
    expect(dependsOn(services['warden-search-attributes'])).toMatchObject({
      temporal: 'service_healthy',
      'temporal-create-namespace': 'service_completed_successfully',
    });
    expect(dependsOn(services['temporal-ui'])).toMatchObject({ temporal: 'service_healthy' });
    expect(dependsOn(services['warden-worker'])).toMatchObject({
      temporal: 'service_healthy',
      'warden-search-attributes': 'service_completed_successfully',
    });
  });

  test('one-shot jobs are not restarted; long-running services are', () => {
    for (const name of ONE_SHOT) expect(services[name].restart ?? 'no', name).toBe('no');
    for (const name of EXPECTED_SERVICES.filter((n) => !ONE_SHOT.includes(n))) {
      expect(['always', 'unless-stopped'], name).toContain(services[name].restart);
    }
  });

  test('every image is pinned to a version (no latest, no bare name)', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (!svc.image) {
        expect(svc.build, `${name} has neither image nor build`).toBeTruthy();
        continue;
      }
      const image = interpolateDefaults(svc.image);
      const m = /^([^@]+?)(?::([^:/@]+))?(?:@sha256:[0-9a-f]{64})?$/.exec(image);
      expect(m, `${name}: ${image}`).toBeTruthy();
      const tag = m![2];
      expect(tag, `${name}: ${image} has no tag`).toBeTruthy();
      expect(tag, `${name}: ${image}`).not.toMatch(/latest|edge|nightly/i);
      expect(tag, `${name}: ${image} tag is not a version`).toMatch(/^v?\d+\.\d+/);
    }
  });

  test('Temporal: plain server image on PostgreSQL, admin-tools jobs of the same version, no auto-setup', () => {
    const tagOf = (img: string) => interpolateDefaults(img).split(':')[1];
    const server = services.temporal.image!;
    expect(server).toMatch(/^temporalio\/server:/);
    for (const [name, svc] of Object.entries(services)) {
      expect(svc.image ?? '', name).not.toMatch(/temporalio\/auto-setup/);
    }
    for (const name of ONE_SHOT) {
      expect(services[name].image, name).toMatch(/^temporalio\/admin-tools:/);
      expect(tagOf(services[name].image!), `${name} must match the server version`).toBe(tagOf(server));
    }
    const t = env(services.temporal);
    expect(t.DB).toBe('postgres12');
    expect(t.POSTGRES_SEEDS).toBe('postgresql');
    expect(t.BIND_ON_IP).toBe('0.0.0.0');
    expect(services.postgresql.image).toMatch(/^postgres:/);
    // The schema job connects to the same database with the same credentials.
    const s = env(services['temporal-schema']);
    expect(s.SQL_PLUGIN).toBe(t.DB);
    expect(s.SQL_HOST).toBe(t.POSTGRES_SEEDS);
    expect(s.SQL_PORT).toBe(t.DB_PORT);
    expect(s.SQL_USER).toBe(t.POSTGRES_USER);
    expect(s.SQL_PASSWORD).toBe(t.POSTGRES_PWD);
    expect(env(services.postgresql).POSTGRES_USER).toBe(t.POSTGRES_USER);
    expect(env(services.postgresql).POSTGRES_PASSWORD).toBe(t.POSTGRES_PWD);
  });

  test('the worker reaches the temporal service by name and frontend port, in one namespace with the jobs', () => {
    const worker = env(services['warden-worker']);
    const [host, port] = worker.TEMPORAL_ADDRESS.split(':');
    expect(host).toBe('temporal');
    expect(services).toHaveProperty([host]);
    const frontendPorts = (services.temporal.ports ?? []).map((p) => parsePort(p).target);
    expect(frontendPorts).toContain(port);
    expect(port).toBe('7233');
    for (const name of ['temporal-create-namespace', 'warden-search-attributes', 'temporal-ui']) {
      expect(env(services[name]).TEMPORAL_ADDRESS, name).toBe(worker.TEMPORAL_ADDRESS);
    }
    const ns = worker.TEMPORAL_NAMESPACE;
    expect(interpolateDefaults(ns)).toBe('default');
    expect(env(services['temporal-create-namespace']).TEMPORAL_NAMESPACE).toBe(ns);
    expect(env(services['warden-search-attributes']).TEMPORAL_NAMESPACE).toBe(ns);
    expect(interpolateDefaults(worker.WARDEN_TASK_QUEUE)).toBe('warden');
  });

  test('the worker image is built, never pulled (pull_policy: build); README says which Compose', () => {
    expect((services['warden-worker'] as { pull_policy?: string }).pull_policy).toBe('build');
    expect(read('README.md')).toMatch(/Compose (≥|>=) ?2\.24/);
  });

  test('the worker is built from our Dockerfile', () => {
    const b = services['warden-worker'].build;
    const ctx = typeof b === 'string' ? b : b?.context;
    const file = typeof b === 'string' ? 'Dockerfile' : (b?.dockerfile ?? 'Dockerfile');
    expect(resolve(ROOT, ctx ?? '')).toBe(ROOT);
    expect(existsSync(join(ROOT, file))).toBe(true);
  });

  test('the search-attribute job registers exactly WardenState/Keyword, WardenEscalationStep/Int, WardenPaused/Bool, WardenCostUsd/Double, WardenTokens/Int, WardenParent/Keyword, WardenEvaluatorCostUsd/Double, WardenLabels/KeywordList', () => {
    const job = services['warden-search-attributes'];
    const [script, ...args] = command(job);
    expect(script).toBe('/deploy/register-search-attributes.sh');
    const pairs = args.map((a) => a.split('='));
    expect(pairs).toEqual([
      ['WardenState', 'Keyword'],
      ['WardenEscalationStep', 'Int'],
      ['WardenPaused', 'Bool'],
      ['WardenCostUsd', 'Double'],
      ['WardenTokens', 'Int'],
      ['WardenParent', 'Keyword'],
      ['WardenEvaluatorCostUsd', 'Double'],
      ['WardenLabels', 'KeywordList'],
    ]);
    // ...and that is exactly what the code declares and writes.
    expect(Object.fromEntries(pairs)).toEqual(SEARCH_ATTRIBUTES);
    expect(read('deploy/temporal/register-search-attributes.sh')).toMatch(/temporal operator search-attribute create/);
  });

  test('ports: frontend 7233 and UI 8080 are published on loopback; nothing else, PostgreSQL not at all', () => {
    const published = Object.entries(services).flatMap(([name, svc]) => (svc.ports ?? []).map((p) => ({ name, ...parsePort(p) })));
    expect(published.map(({ name, published, target }) => `${name} ${published}->${target}`).sort()).toEqual(['temporal 7233->7233', 'temporal-ui 8080->8080']);
    for (const p of published) expect(p.hostIp, `${p.name} should bind to loopback`).toBe('127.0.0.1');
    expect(services.postgresql.ports).toBeUndefined();
    expect(env(services['temporal-ui']).TEMPORAL_UI_PORT ?? '8080').toBe('8080');
  });

  test('volumes: named volumes are declared, PostgreSQL data is on one, bind mounts exist in the repo', () => {
    const declared = new Set(Object.keys(compose.volumes ?? {}));
    const mounts = (svc: Service) =>
      (svc.volumes ?? []).map((v) => {
        if (typeof v !== 'string') return { source: v.source ?? '', target: v.target };
        const [source, target] = v.split(':');
        return { source, target };
      });
    for (const [name, svc] of Object.entries(services)) {
      for (const { source } of mounts(svc)) {
        if (source.startsWith('.') || source.startsWith('/')) {
          expect(existsSync(resolve(ROOT, source)), `${name} mounts missing ${source}`).toBe(true);
        } else {
          expect(declared.has(source), `${name} uses undeclared volume ${source}`).toBe(true);
        }
      }
    }
    const pg = mounts(services.postgresql).find((m) => m.target === '/var/lib/postgresql/data');
    expect(pg, 'PostgreSQL data must be on a volume').toBeTruthy();
    expect(declared.has(pg!.source)).toBe(true);
    // Every declared volume is used.
    const used = new Set(Object.values(services).flatMap((s) => mounts(s).map((m) => m.source)));
    for (const v of declared) expect(used.has(v), `volume ${v} is declared but unused`).toBe(true);
  });

  test('the job scripts and the dynamic config file the services name are in the mounted directories', () => {
    for (const name of ONE_SHOT) {
      const svc = services[name];
      expect(svc.entrypoint).toEqual(['/bin/sh']);
      const script = command(svc)[0];
      const mount = (svc.volumes as string[]).find((v) => script.startsWith(`${v.split(':')[1]}/`));
      expect(mount, `${name}: ${script} is not under a mounted directory`).toBeTruthy();
      const [src, target] = mount!.split(':');
      expect(existsSync(join(ROOT, src, script.slice(target.length))), `${name}: ${script}`).toBe(true);
    }
    const dyn = env(services.temporal).DYNAMIC_CONFIG_FILE_PATH;
    const mount = (services.temporal.volumes as string[]).find((v) => dyn.startsWith(`${v.split(':')[1]}/`));
    expect(mount).toBeTruthy();
    const [src, target] = mount!.split(':');
    const file = join(ROOT, src, dyn.slice(target.length));
    expect(existsSync(file)).toBe(true);
    expect(parse(readFileSync(file, 'utf8'))).toBeTypeOf('object');
  });

  test('secrets only through env_file or interpolation, never literal in the compose file', () => {
    const secretish = /KEY|SECRET|TOKEN|PASSWORD|PWD/;
    for (const [name, svc] of Object.entries(services)) {
      for (const [k, v] of Object.entries(env(svc))) {
        if (secretish.test(k)) expect(v, `${name}.${k} must be interpolated, not literal`).toMatch(/^\$\{[A-Z0-9_]+(:-[^}]*)?\}$/);
      }
    }
    const worker = env(services['warden-worker']);
    expect(Object.keys(worker).filter((k) => secretish.test(k))).toEqual([]);
    const files = services['warden-worker'].env_file;
    expect(files).toEqual([{ path: './deploy/warden.env', required: false }]);
    // The real env file is ignored by git and by the Docker build context; the example is not.
    expect(read('deploy/.gitignore').split('\n')).toContain('warden.env');
    expect(existsSync(join(ROOT, 'deploy/warden.env.example'))).toBe(true);
    const example = read('deploy/warden.env.example');
    // Secrets stay empty; the operator's allow-lists (names and URL patterns, not secrets) show an example.
    for (const line of example.split('\n').filter((l) => /^[A-Z_]+=/.test(l) && !/^WARDEN_[A-Z_]+_ALLOW=/.test(l)))
      expect(line, 'example values stay empty').toMatch(/=$/);
  });
});

// ---------------------------------------------------------------------------------------------
// Dockerfile and .dockerignore
// ---------------------------------------------------------------------------------------------

interface Instruction {
  op: string;
  args: string;
}
function dockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let buf = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (!buf && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (buf && line.trim().startsWith('#')) continue;
    if (line.endsWith('\\')) {
      buf += `${line.slice(0, -1)} `;
      continue;
    }
    buf += line;
    const m = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(buf);
    if (m) out.push({ op: m[1].toUpperCase(), args: m[2].trim() });
    buf = '';
  }
  return out;
}

describe('Dockerfile', () => {
  const ins = dockerfile(read('Dockerfile'));
  const froms = ins.map((x, i) => ({ ...x, i })).filter((x) => x.op === 'FROM');
  const globalArgs = Object.fromEntries(
    ins
      .slice(0, froms[0]?.i ?? 0)
      .filter((x) => x.op === 'ARG')
      .map((x) => x.args.split('=') as [string, string]),
  );
  const finalStage = ins.slice(froms[froms.length - 1].i);
  const subst = (s: string) => s.replace(/\$\{?([A-Z_]+)\}?/g, (_m, n) => globalArgs[n] ?? '');

  test('multi-stage, on a pinned Node 24 Debian image, the same Node that .ci/run installs', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const ciNode = /^NODE_VERSION=(\S+)$/m.exec(read('.ci/run'))?.[1];
    expect(ciNode).toMatch(/^24\.\d+\.\d+$/);
    for (const f of froms) {
      const image = subst(f.args.split(/\s+/)[0]);
      expect(image).toMatch(/^node:24\.\d+\.\d+-(bookworm|bullseye|trixie)(-slim)?$/);
      expect(image.split(':')[1].split('-')[0]).toBe(ciNode);
    }
  });

  test('no `# syntax=` directive: it makes the builder pull a frontend image before building', () => {
    expect(read('Dockerfile')).not.toMatch(/^#\s*syntax\s*=/im);
  });

  test('WARDEN_HOME is a directory of the image owned by its user, on the named volume compose mounts', () => {
    const home = finalStage.filter((x) => x.op === 'ENV' && /^WARDEN_HOME=/.test(x.args)).pop();
    expect(home, 'final stage sets WARDEN_HOME').toBeTruthy();
    const dir = home!.args.split('=')[1];
    const user = finalStage.filter((x) => x.op === 'USER').pop()!.args;
    const run = finalStage
      .filter((x) => x.op === 'RUN')
      .map((x) => x.args)
      .join(' && ');
    expect(run).toContain(`mkdir -p ${dir}`);
    expect(run).toContain(`chown ${user} ${dir}`);
    const worker = services['warden-worker'];
    const mount = (worker.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':') : [v.source ?? '', v.target])).find(([, t]) => t === dir);
    expect(mount, `warden-worker mounts a volume at ${dir}`).toBeTruthy();
    expect(Object.keys(compose.volumes ?? {})).toContain(mount![0]);
    // The worker does not override WARDEN_HOME away from the volume.
    expect(env(worker).WARDEN_HOME ?? dir).toBe(dir);
  });

  test('npm ci without install scripts, build with tsc, prune dev dependencies', () => {
    const runs = ins.filter((x) => x.op === 'RUN').map((x) => x.args);
    const ci = runs.find((r) => /\bnpm ci\b/.test(r));
    expect(ci).toBeTruthy();
    expect(ci).toMatch(/--ignore-scripts/);
    expect(runs.some((r) => /\bnpm run build\b/.test(r))).toBe(true);
    expect(JSON.parse(read('package.json')).scripts.build).toMatch(/^tsc\b/);
    expect(runs.some((r) => /npm prune --omit=dev|npm ci [^&]*--omit=dev/.test(r))).toBe(true);
  });

  test('copies everything tsconfig.json compiles into the build stage', () => {
    const tsconfig = JSON.parse(read('tsconfig.json')) as { include: string[] };
    const copied = ins.filter((x) => x.op === 'COPY' && !x.args.startsWith('--')).flatMap((x) => x.args.split(/\s+/).slice(0, -1));
    for (const dir of tsconfig.include) expect(copied, `tsconfig includes ${dir}`).toContain(dir);
    expect(copied).toContain('tsconfig.json');
    expect(copied).toContain('package-lock.json');
  });

  test('the final stage runs as a non-root user and bakes in no secrets', () => {
    const user = finalStage.filter((x) => x.op === 'USER').pop();
    expect(user, 'final stage needs USER').toBeTruthy();
    expect(user!.args).not.toMatch(/^(root|0)(:|$)/);
    for (const x of ins.filter((y) => y.op === 'ENV' || y.op === 'ARG')) {
      expect(x.args, `${x.op} ${x.args}`).not.toMatch(/KEY|SECRET|TOKEN|PASSWORD/i);
    }
    // The runtime image carries package.json: the CLI reads its version from there.
    expect(finalStage.some((x) => x.op === 'COPY' && /package\.json/.test(x.args))).toBe(true);
  });

  test('CMD runs the compiled worker, a file `tsc -p .` produces', () => {
    const cmd = finalStage.filter((x) => x.op === 'CMD').pop();
    expect(cmd).toBeTruthy();
    const argv = JSON.parse(cmd!.args) as string[];
    expect(argv).toEqual(['node', 'dist/workers/main.js']);
    const tsconfig = JSON.parse(read('tsconfig.json')) as { compilerOptions: { outDir: string; rootDir: string } };
    const outDir = tsconfig.compilerOptions.outDir.replace(/^\.\//, '');
    expect(argv[1].startsWith(`${outDir}/`)).toBe(true);
    const source = join(tsconfig.compilerOptions.rootDir, argv[1].slice(outDir.length + 1)).replace(/\.js$/, '.ts');
    expect(existsSync(join(ROOT, source)), `source ${source}`).toBe(true);
    // Tests run after `npx tsc -p .`: the compiled entry point must be there.
    expect(existsSync(join(ROOT, argv[1])), `${argv[1]} (run \`npx tsc -p .\` first)`).toBe(true);
    // The runtime stage copies the build output it runs.
    expect(finalStage.some((x) => x.op === 'COPY' && /--from=build\s+\/app\/dist\b/.test(x.args))).toBe(true);
  });

  test('.dockerignore keeps node_modules, dist, .warden, .git and env files out of the context', () => {
    const lines = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const p of ['node_modules', 'dist', '.warden', '.git', '.env']) expect(lines).toContain(p);
    // ...but nothing the build needs.
    const tsconfig = JSON.parse(read('tsconfig.json')) as { include: string[] };
    for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', ...tsconfig.include]) expect(lines).not.toContain(needed);
  });
});

// ---------------------------------------------------------------------------------------------
// deploy/native: the same topology without containers
// ---------------------------------------------------------------------------------------------

describe('deploy/native/up.sh', () => {
  const script = read('deploy/native/up.sh');

  test('builds the Temporal server version compose runs, and is valid bash', () => {
    const tag = interpolateDefaults(services.temporal.image!).split(':')[1];
    expect(/^TEMPORAL_SERVER_VERSION=(\S+)$/m.exec(script)?.[1]).toBe(tag);
    expect(script).toContain('go.temporal.io/server/cmd/server@v$TEMPORAL_SERVER_VERSION');
    expect(script).toContain('go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_SERVER_VERSION');
    for (const f of ['deploy/native/up.sh', 'deploy/native/down.sh']) {
      const r = spawnSync('bash', ['-n', join(ROOT, f)], { encoding: 'utf8' });
      expect(r.status, `${f}: ${r.stderr}`).toBe(0);
    }
  });

  test('runs the compose jobs themselves, with the same search attributes and the server env compose gives', () => {
    for (const job of ['setup-schema.sh', 'create-namespace.sh', 'register-search-attributes.sh']) expect(script).toContain(`deploy/temporal/${job}`);
    const sa = command(services['warden-search-attributes']).slice(1).join(' ');
    expect(script).toContain(sa);
    for (const k of ['DB', 'POSTGRES_SEEDS', 'POSTGRES_USER', 'POSTGRES_PWD', 'BIND_ON_IP', 'DYNAMIC_CONFIG_FILE_PATH']) {
      expect(env(services.temporal), k).toHaveProperty(k);
      expect(script, k).toMatch(new RegExp(`\\b${k}=`));
    }
    expect(JSON.parse(read('package.json')).scripts['prod:native']).toBe('bash deploy/native/up.sh --walkthrough --down');
  });
});

// ---------------------------------------------------------------------------------------------
// package-lock.json: what `npm ci` (npm 11) needs
// ---------------------------------------------------------------------------------------------

describe('package-lock.json', () => {
  interface LockEntry {
    version?: string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  }
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockEntry> };

  /** Where npm would find `name` for the package at `path` (node_modules lookup, innermost first). */
  function resolveIn(path: string, name: string): string | undefined {
    let dir = path;
    for (;;) {
      const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      if (lock.packages[candidate]) return candidate;
      if (!dir) return undefined;
      const i = dir.lastIndexOf('/node_modules/');
      dir = i < 0 ? '' : dir.slice(0, i);
    }
  }

  test('lists every optional dependency of every package (npm 11 `npm ci` refuses a lock that does not)', () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) if (!resolveIn(path, name)) missing.push(`${path || '(root)'} -> ${name}`);
    }
    expect(missing).toEqual([]);
  });

  test('engines and @types/node follow the Node line the project runs on (24, still 22)', () => {
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
    expect(pkg.engines.node).toBe('>=22');
    expect(pkg.devDependencies['@types/node']).toMatch(/^24\.\d+\.\d+$/);
    expect(lock.packages['node_modules/@types/node']?.version).toBe(pkg.devDependencies['@types/node']);
  });
});

// ---------------------------------------------------------------------------------------------
// The one-shot job scripts, run under /bin/sh against stand-in commands
// ---------------------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'warden-compose-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const FAKE_TEMPORAL = `#!/bin/sh
# Stand-in for the temporal CLI: state in $FAKE_STATE, every call logged to $FAKE_STATE/calls.
S="$FAKE_STATE"
echo "$*" >> "$S/calls"
name=""; type=""; ns="default"
prev=""
for a in "$@"; do
  case "$prev" in --name) name="$a";; --type) type="$a";; --namespace|-n) ns="$a";; esac
  prev="$a"
done
case "$1 $2 $3" in
  "operator cluster health")
    if [ -f "$S/unhealthy" ]; then
      n=$(cat "$S/unhealthy"); if [ "$n" -gt 0 ]; then echo $((n - 1)) > "$S/unhealthy"; exit 1; fi
    fi
    echo SERVING; exit 0;;
  "operator namespace describe") grep -qx "$ns" "$S/namespaces" 2>/dev/null; exit $?;;
  "operator namespace create") echo "$ns" >> "$S/namespaces"; exit 0;;
  "operator search-attribute list")
    grep -qx "$ns" "$S/namespaces" 2>/dev/null || { echo "namespace $ns not found" >&2; exit 1; }
    # What \`temporal operator search-attribute list -o json\` prints (pretty unless $S/compact, as
    # with -o jsonl); without -o json, the human table, which the script must not be reading.
    case " $* " in *" -o json "*) ;; *) echo "  Name  Type"; echo "  WardenState  Int"; exit 0;; esac
    q='"'
    if [ -f "$S/compact" ]; then
      custom=$(awk -v q="$q" '{ printf "%s%s%s%s:%s%s%s", (NR > 1 ? "," : ""), q, $1, q, q, $2, q }' "$S/sa" 2>/dev/null)
      echo "{\${q}customAttributes\${q}:{$custom},\${q}systemAttributes\${q}:{\${q}WorkflowType\${q}:\${q}INDEXED_VALUE_TYPE_KEYWORD\${q}}}"
    else
      echo "{"
      echo "  \${q}customAttributes\${q}: {"
      [ -f "$S/sa" ] && awk -v q="$q" '{ l[NR] = $0 } END { for (i = 1; i <= NR; i++) { split(l[i], f, " "); printf "    %s%s%s: %s%s%s%s\\n", q, f[1], q, q, f[2], q, (i < NR ? "," : "") } }' "$S/sa"
      echo "  },"
      echo "  \${q}systemAttributes\${q}: {"
      echo "    \${q}StartTime\${q}: \${q}INDEXED_VALUE_TYPE_DATETIME\${q},"
      echo "    \${q}WorkflowType\${q}: \${q}INDEXED_VALUE_TYPE_KEYWORD\${q}"
      echo "  }"
      echo "}"
    fi
    exit 0;;
  "operator search-attribute create")
    if awk -v n="$name" '$1 == n { f = 1 } END { exit !f }' "$S/sa" 2>/dev/null; then
      echo "Error: unable to add search attributes: Search attribute $name already exists" >&2; exit 1
    fi
    echo "$name $type" >> "$S/sa"; echo "Search attributes have been added"; exit 0;;
esac
echo "fake temporal: unexpected call: $*" >&2
exit 3
`;

const FAKE_SQL_TOOL = `#!/bin/sh
# Stand-in for temporal-sql-tool: databases in $FAKE_STATE/dbs; calls logged with the SQL_* env.
S="$FAKE_STATE"
echo "$SQL_PLUGIN $SQL_HOST:$SQL_PORT $SQL_USER $*" >> "$S/calls"
if [ -f "$S/down" ]; then
  n=$(cat "$S/down"); if [ "$n" -gt 0 ]; then echo $((n - 1)) > "$S/down"; echo "connection refused" >&2; exit 1; fi
fi
db="$2"; cmd="$3"
case "$cmd" in
  # 1.31 on PostgreSQL: an existing database is success (the duplicate-database error is ignored).
  create-database) grep -qx "$db" "$S/dbs" 2>/dev/null || echo "$db" >> "$S/dbs"; exit 0;;
  setup-schema|update-schema)
    grep -qx "$db" "$S/dbs" 2>/dev/null || { echo "no database $db" >&2; exit 1; }
    [ -f "$S/fail-$cmd" ] && exit 1
    exit 0;;
esac
exit 3
`;

function fakeBin(): { bin: string; state: string } {
  const dir = mkdtempSync(join(work, 'case-'));
  const bin = join(dir, 'bin');
  const state = join(dir, 'state');
  spawnSync('mkdir', ['-p', bin, state]);
  for (const [name, body] of [
    ['temporal', FAKE_TEMPORAL],
    ['temporal-sql-tool', FAKE_SQL_TOOL],
    ['nc', '#!/bin/sh\nexit 0\n'],
  ] as const) {
    writeFileSync(join(bin, name), body);
    chmodSync(join(bin, name), 0o755);
  }
  return { bin, state };
}

// The jobs run under busybox ash in temporalio/admin-tools (Alpine); here under /bin/sh, and under
// busybox too when this machine has it.
const SHELLS: string[][] = [['/bin/sh']];
if (spawnSync('busybox', ['sh', '-c', 'exit 0']).status === 0) SHELLS.push(['busybox', 'sh']);
let shell: string[] = SHELLS[0];

function runScript(script: string, args: string[], fake: { bin: string; state: string }, extraEnv: Record<string, string> = {}) {
  const r = spawnSync(shell[0], [...shell.slice(1), join(ROOT, 'deploy/temporal', script), ...args], {
    encoding: 'utf8',
    env: {
      PATH: `${fake.bin}:${process.env.PATH}`,
      FAKE_STATE: fake.state,
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'default',
      WAIT_SECONDS: '0',
      WAIT_ATTEMPTS: '5',
      ...extraEnv,
    },
    timeout: 20_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}
const stateFile = (fake: { state: string }, f: string) => (existsSync(join(fake.state, f)) ? readFileSync(join(fake.state, f), 'utf8') : '');
const calls = (fake: { state: string }, prefix: string) =>
  stateFile(fake, 'calls')
    .split('\n')
    .filter((l) => l.startsWith(prefix));

describe.each(SHELLS.map((s) => [s.join(' '), s]))('deploy/temporal job scripts under %s', (_name, sh) => {
  const SA_ARGS = command(services['warden-search-attributes']).slice(1);
  beforeAll(() => {
    shell = sh as string[];
  });

  test('are valid POSIX sh', () => {
    for (const s of ['setup-schema.sh', 'create-namespace.sh', 'register-search-attributes.sh']) {
      const r = spawnSync(shell[0], [...shell.slice(1), '-n', join(ROOT, 'deploy/temporal', s)], { encoding: 'utf8' });
      expect(r.status, `${s}: ${r.stderr}`).toBe(0);
      expect(statSync(join(ROOT, 'deploy/temporal', s)).size).toBeGreaterThan(0);
    }
  });

  test('search attributes: waits for the cluster, creates all seven, and a second run creates nothing', () => {
    const fake = fakeBin();
    writeFileSync(join(fake.state, 'namespaces'), 'default\n');
    writeFileSync(join(fake.state, 'unhealthy'), '2');
    const first = runScript('register-search-attributes.sh', SA_ARGS, fake);
    expect(first.status, first.out).toBe(0);
    expect(stateFile(fake, 'sa').trim().split('\n')).toEqual([
      'WardenState Keyword',
      'WardenEscalationStep Int',
      'WardenPaused Bool',
      'WardenCostUsd Double',
      'WardenTokens Int',
      'WardenParent Keyword',
      'WardenEvaluatorCostUsd Double',
      'WardenLabels KeywordList',
    ]);
    expect(calls(fake, 'operator cluster health')).toHaveLength(3);
    expect(calls(fake, 'operator search-attribute create')).toHaveLength(8);
    for (const c of calls(fake, 'operator search-attribute create')) expect(c).toMatch(/--namespace default --address temporal:7233/);

    // Idempotent: everything exists, and this (older-server-like) fake refuses re-adds.
    const again = runScript('register-search-attributes.sh', SA_ARGS, fake);
    expect(again.status, again.out).toBe(0);
    expect(calls(fake, 'operator search-attribute create')).toHaveLength(8);
  });

  test('search attributes: a partly registered namespace gets only the missing ones; type spelling does not matter', () => {
    const fake = fakeBin();
    writeFileSync(join(fake.state, 'namespaces'), 'default\n');
    writeFileSync(join(fake.state, 'sa'), 'WardenState INDEXED_VALUE_TYPE_KEYWORD\n');
    const r = runScript('register-search-attributes.sh', SA_ARGS, fake);
    expect(r.status, r.out).toBe(0);
    expect(calls(fake, 'operator search-attribute create').map((c) => /--name (\S+)/.exec(c)![1])).toEqual([
      'WardenEscalationStep',
      'WardenPaused',
      'WardenCostUsd',
      'WardenTokens',
      'WardenParent',
      'WardenEvaluatorCostUsd',
      'WardenLabels',
    ]);
  });

  test('search attributes: retries while the namespace is not visible yet', () => {
    const fake = fakeBin();
    // No namespace at first: list fails; it appears after a moment (as the namespace cache refreshes).
    const r1 = runScript('register-search-attributes.sh', SA_ARGS, fake, { WAIT_ATTEMPTS: '2' });
    expect(r1.status).not.toBe(0);
    expect(r1.out).toMatch(/could not register search attribute WardenState/);
    writeFileSync(join(fake.state, 'namespaces'), 'default\n');
    const r2 = runScript('register-search-attributes.sh', SA_ARGS, fake);
    expect(r2.status, r2.out).toBe(0);
  });

  test('search attributes: reads `-o json`, compact or pretty; a longer name sharing the prefix is not a match', () => {
    for (const compact of [false, true]) {
      const fake = fakeBin();
      writeFileSync(join(fake.state, 'namespaces'), 'default\n');
      if (compact) writeFileSync(join(fake.state, 'compact'), '');
      // WardenStateOld (Int) must not be taken for WardenState; WardenPaused is already there.
      writeFileSync(join(fake.state, 'sa'), 'WardenStateOld INDEXED_VALUE_TYPE_INT\nWardenPaused INDEXED_VALUE_TYPE_BOOL\n');
      const r = runScript('register-search-attributes.sh', SA_ARGS, fake);
      expect(r.status, r.out).toBe(0);
      for (const c of calls(fake, 'operator search-attribute list')) expect(c).toMatch(/ -o json( |$)/);
      expect(calls(fake, 'operator search-attribute create').map((c) => /--name (\S+)/.exec(c)![1])).toEqual([
        'WardenState',
        'WardenEscalationStep',
        'WardenCostUsd',
        'WardenTokens',
        'WardenParent',
        'WardenEvaluatorCostUsd',
        'WardenLabels',
      ]);
      expect(r.out).toMatch(/search attribute WardenPaused \(Bool\) is registered/);
    }
  });

  test('search attributes: an existing attribute of another type fails the job, naming it', () => {
    const fake = fakeBin();
    writeFileSync(join(fake.state, 'namespaces'), 'default\n');
    writeFileSync(join(fake.state, 'sa'), 'WardenPaused Keyword\n');
    const r = runScript('register-search-attributes.sh', SA_ARGS, fake);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/WardenPaused exists in namespace default with type Keyword, not Bool/);
  });

  test('search attributes: bad arguments are a usage error', () => {
    const fake = fakeBin();
    expect(runScript('register-search-attributes.sh', [], fake).status).toBe(2);
    expect(runScript('register-search-attributes.sh', ['WardenState'], fake).status).toBe(2);
  });

  test('namespace: created once with the retention, left alone afterwards', () => {
    const fake = fakeBin();
    const first = runScript('create-namespace.sh', [], fake, { TEMPORAL_NAMESPACE_RETENTION: '3d' });
    expect(first.status, first.out).toBe(0);
    expect(calls(fake, 'operator namespace create')).toEqual(['operator namespace create --namespace default --retention 3d --address temporal:7233']);
    const again = runScript('create-namespace.sh', [], fake);
    expect(again.status, again.out).toBe(0);
    expect(calls(fake, 'operator namespace create')).toHaveLength(1);
    expect(again.out).toMatch(/namespace default exists/);
  });

  test('namespace: gives up when the cluster never becomes healthy', () => {
    const fake = fakeBin();
    writeFileSync(join(fake.state, 'unhealthy'), '100');
    const r = runScript('create-namespace.sh', [], fake, { WAIT_ATTEMPTS: '3' });
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/not healthy after 3 attempts/);
  });

  test('schema: creates both databases and applies both schemas; a re-run tolerates existing databases', () => {
    const fake = fakeBin();
    const sqlEnv = env(services['temporal-schema']);
    const run = () => runScript('setup-schema.sh', [], fake, { ...sqlEnv, SQL_PASSWORD: interpolateDefaults(sqlEnv.SQL_PASSWORD) });
    const first = run();
    expect(first.status, first.out).toBe(0);
    expect(stateFile(fake, 'dbs').trim().split('\n')).toEqual(['temporal', 'temporal_visibility']);
    const updates = calls(fake, 'postgres12 postgresql:5432 temporal').filter((c) => c.includes('update-schema'));
    // The schema built into temporal-sql-tool, not a directory that must exist in the image.
    expect(updates).toEqual([
      'postgres12 postgresql:5432 temporal --db temporal update-schema --schema-name postgresql/v12/temporal',
      'postgres12 postgresql:5432 temporal --db temporal_visibility update-schema --schema-name postgresql/v12/visibility',
    ]);
    expect(read('deploy/temporal/setup-schema.sh')).not.toMatch(/\/etc\/temporal\/schema|update-schema -d /);
    const again = run();
    expect(again.status, again.out).toBe(0);
    expect(stateFile(fake, 'dbs').trim().split('\n')).toEqual(['temporal', 'temporal_visibility']);
    expect(calls(fake, 'postgres12').filter((c) => c.includes('update-schema'))).toHaveLength(4);
  });

  test('schema: retries while PostgreSQL is not accepting connections yet', () => {
    const fake = fakeBin();
    writeFileSync(join(fake.state, 'down'), '3');
    const sqlEnv = env(services['temporal-schema']);
    const r = runScript('setup-schema.sh', [], fake, { ...sqlEnv, SQL_PASSWORD: 'x' });
    expect(r.status, r.out).toBe(0);
    expect(stateFile(fake, 'dbs').trim().split('\n')).toEqual(['temporal', 'temporal_visibility']);
  });

  test('schema: a failing migration fails the job', () => {
    const fake = fakeBin();
    writeFileSync(join(fake.state, 'fail-update-schema'), '');
    const sqlEnv = env(services['temporal-schema']);
    const r = runScript('setup-schema.sh', [], fake, { ...sqlEnv, SQL_PASSWORD: 'x' });
    expect(r.status).not.toBe(0);
  });
});
