/** A real HTTP listener on 127.0.0.1 that records webhook deliveries (optionally failing the first N). */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface Delivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: unknown;
  status: number;
}

export interface WebhookListener {
  url: string;
  deliveries: Delivery[];
  /** Requests answered with success. */
  accepted(): Delivery[];
  close(): Promise<void>;
}

export async function startWebhookListener(opts: { failFirst?: number; failStatus?: number } = {}): Promise<WebhookListener> {
  const deliveries: Delivery[] = [];
  let failures = opts.failFirst ?? 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        /* recorded as is */
      }
      const status = failures > 0 ? (opts.failStatus ?? 503) : 200;
      if (failures > 0) failures -= 1;
      deliveries.push({ headers: req.headers, body, json, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{"ok":true}' : '{"error":"try later"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hooks/warden`,
    deliveries,
    accepted: () => deliveries.filter((d) => d.status === 200),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Verify `X-Warden-Signature: sha256=<hex>` the way a receiver would. */
export function verifySignature(body: string, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(body).digest('hex'));
  const got = Buffer.from(header.slice('sha256='.length));
  return expected.length === got.length && timingSafeEqual(expected, got);
}
