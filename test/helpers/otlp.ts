/**
 * A real OTLP/HTTP receiver on 127.0.0.1: accepts `POST /v1/traces`, `/v1/metrics` and `/v1/logs`
 * in the OTLP JSON encoding (what @opentelemetry/exporter-*-otlp-http send; gzip too), keeps every
 * raw body, and flattens what arrived into spans, log records and metric points with plain
 * attribute maps. Anything else POSTed (a webhook) is answered 200 and kept in `other`. A protobuf
 * body is refused with 415, so a test sees it if an exporter ever switches encoding.
 */
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';

export type Attrs = Record<string, string | number | boolean>;

export interface OtlpSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Attrs;
  resource: Attrs;
  scope: string;
}

export interface OtlpLog {
  eventName: string;
  severityText: string;
  body: unknown;
  attributes: Attrs;
  resource: Attrs;
  scope: string;
}

export interface OtlpPoint {
  metric: string;
  unit: string;
  kind: 'sum' | 'gauge' | 'histogram';
  attributes: Attrs;
  /** A sum's or gauge's value; a histogram's sum. */
  value: number;
  /** A histogram's count. */
  count?: number;
  resource: Attrs;
}

export interface OtlpReceiver {
  url: string;
  /** Every body received on /v1/*, raw (after gunzip), for searching what must not be there. */
  raw: { path: string; contentType: string; body: string }[];
  /** Requests to other paths (webhooks sent to the same listener). */
  other: { path: string; body: string }[];
  spans(): OtlpSpan[];
  logs(): OtlpLog[];
  /** Every data point received (cumulative sums repeat per export: take the latest or the max). */
  points(): OtlpPoint[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: unknown; kvlistValue?: unknown };
type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue | undefined): string | number | boolean {
  if (!v) return '';
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return JSON.stringify(v);
}

export function attrs(list: KeyValue[] | undefined): Attrs {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

/** OTLP JSON carries ids as hex strings (the JS exporter) or base64 (the protobuf JSON mapping): hex either way. */
const hexId = (id: unknown): string => (typeof id !== 'string' ? '' : /^[0-9a-f]*$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex'));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const raw: OtlpReceiver['raw'] = [];
  const other: OtlpReceiver['other'] = [];
  const docs: { path: string; json: Record<string, unknown[]> }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let buf = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') buf = gunzipSync(buf);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const contentType = String(req.headers['content-type'] ?? '');
      if (!path.startsWith('/v1/')) {
        other.push({ path, body: buf.toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      if (!/^application\/json\b/.test(contentType)) {
        res.writeHead(415, { 'content-type': 'text/plain' }).end('this receiver takes OTLP/HTTP JSON');
        return;
      }
      const body = buf.toString('utf8');
      raw.push({ path, contentType, body });
      try {
        docs.push({ path, json: JSON.parse(body) as Record<string, unknown[]> });
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;

  type Scoped = { resource?: { attributes?: KeyValue[] }; [k: string]: unknown };
  /** resource × scope × items, for one signal. */
  function* walk(path: string, top: string, scopes: string, items: string): Generator<{ resource: Attrs; scope: string; item: Record<string, unknown> }> {
    for (const d of docs.filter((x) => x.path === path)) {
      for (const r of (d.json[top] ?? []) as Scoped[]) {
        const resource = attrs(r.resource?.attributes);
        for (const s of (r[scopes] ?? []) as { scope?: { name?: string }; [k: string]: unknown }[]) {
          for (const item of (s[items] ?? []) as Record<string, unknown>[]) yield { resource, scope: s.scope?.name ?? '', item };
        }
      }
    }
  }

  return {
    url: `http://127.0.0.1:${port}`,
    raw,
    other,
    spans: () =>
      [...walk('/v1/traces', 'resourceSpans', 'scopeSpans', 'spans')].map(({ resource, scope, item }) => ({
        name: String(item.name),
        kind: Number(item.kind ?? 0),
        traceId: hexId(item.traceId),
        spanId: hexId(item.spanId),
        parentSpanId: hexId(item.parentSpanId),
        attributes: attrs(item.attributes as KeyValue[]),
        resource,
        scope,
      })),
    logs: () =>
      [...walk('/v1/logs', 'resourceLogs', 'scopeLogs', 'logRecords')].map(({ resource, scope, item }) => ({
        eventName: String(item.eventName ?? ''),
        severityText: String(item.severityText ?? ''),
        body: item.body ? value(item.body as AnyValue) : undefined,
        attributes: attrs(item.attributes as KeyValue[]),
        resource,
        scope,
      })),
    points: () =>
      [...walk('/v1/metrics', 'resourceMetrics', 'scopeMetrics', 'metrics')].flatMap(({ resource, item }) => {
        const kind = item.sum ? 'sum' : item.gauge ? 'gauge' : item.histogram ? 'histogram' : null;
        if (!kind) return [];
        const data = item[kind] as { dataPoints?: Record<string, unknown>[] };
        return (data.dataPoints ?? []).map((p) => ({
          metric: String(item.name),
          unit: String(item.unit ?? ''),
          kind,
          attributes: attrs(p.attributes as KeyValue[]),
          value: kind === 'histogram' ? Number(p.sum ?? 0) : Number(p.asDouble ?? p.asInt ?? 0),
          ...(kind === 'histogram' ? { count: Number(p.count ?? 0) } : {}),
          resource,
        }));
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The highest value a metric reached at these attributes (cumulative sums grow export by export). */
export function latest(points: OtlpPoint[], metric: string, match: Attrs = {}): number {
  const hits = points.filter((p) => p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v));
  return hits.reduce((m, p) => Math.max(m, p.kind === 'histogram' ? (p.count ?? 0) : p.value), 0);
}
