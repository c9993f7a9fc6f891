/** A hooked user of their own for the resident hook endpoint's tests, and the `warden serve` their hooks start. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../src/devserver/ports.js';
import { ensureEndpoint, type HookEndpoint } from '../../src/hooks/endpoint-file.js';
import { cmdline, processesWithEnv } from './procs.js';

export interface EndpointUser {
  dir: string;
  home: string;
  /** The session's project directory. */
  project: string;
  /** The environment of the user's agent CLIs and hooks (nothing of the test's own). */
  env: {
    PATH: string;
    HOME: string;
    WARDEN_HOME: string;
    XDG_CACHE_HOME: string;
    XDG_CONFIG_HOME: string;
    TEMPORAL_ADDRESS: string;
    TEMPORAL_NAMESPACE: string;
    WARDEN_LOG_LEVEL: string;
  };
  endpoint: HookEndpoint;
}

/**
 * A user under `dir`: a home, warden home, caches and config of their own, an endpoint file on a free
 * loopback port (as `warden install` leaves it), and a project directory `project`.
 */
export async function endpointUser(dir: string, project: string, server: { address: string; namespace: string }): Promise<EndpointUser> {
  const home = join(dir, 'home');
  const projectDir = join(dir, project);
  mkdirSync(home, { recursive: true });
  mkdirSync(projectDir, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    WARDEN_HOME: join(home, '.warden'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_CONFIG_HOME: join(home, '.config'),
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    WARDEN_LOG_LEVEL: 'warn',
  };
  const { endpoint } = await ensureEndpoint(env, `127.0.0.1:${await freePort()}`);
  return { dir, home, project: projectDir, env, endpoint };
}

/** The `warden serve` processes of a warden home (the agent CLIs and hooks carry the same WARDEN_HOME). */
export const serveOf = (wardenHome: string): number[] => processesWithEnv(`WARDEN_HOME=${wardenHome}`).filter((pid) => cmdline(pid).includes('serve'));
