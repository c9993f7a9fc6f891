/** Free TCP ports on 127.0.0.1, asked of the kernel (bind to port 0). */
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** `n` distinct free ports, none of them in `exclude` (ports already promised to someone else). */
export async function freePorts(n: number, exclude: readonly number[] = []): Promise<number[]> {
  const out = new Set<number>();
  while (out.size < n) {
    const p = await freePort();
    if (!exclude.includes(p)) out.add(p);
  }
  return [...out];
}

export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}
