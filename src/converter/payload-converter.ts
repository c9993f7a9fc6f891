/**
 * warden's payload converter: Temporal's default composite (undefined, binary, JSON) that never
 * throws on decoding. A payload it cannot decode — an unknown `encoding`, bytes that are not JSON
 * under `json/plain`, missing metadata — and a `binary/plain` payload (warden never sends bytes; an
 * object is expected everywhere) decode to the sentinel of src/domain/contract/undecodable.ts instead.
 *
 * Why: a decoding error inside the workflow fails the workflow task, which the server retries
 * forever — one bad signal from any caller (`temporal workflow signal --input-meta
 * encoding=foo/bar`) wedged the agent for good. With this converter the handler receives the
 * sentinel, which every warden schema refuses as "expected object" (and handlers that check
 * `isUndecodable` can name the reason).
 *
 * Loaded by path (Temporal's `payloadConverterPath`) on the worker, in the workflow bundle and in
 * the client; see PAYLOAD_CONVERTER_PATH in src/converter/path.ts. Encoding is unchanged.
 */
import {
  BinaryPayloadConverter,
  CompositePayloadConverter,
  JsonPayloadConverter,
  UndefinedPayloadConverter,
  METADATA_ENCODING_KEY,
  str,
  type Payload,
} from '@temporalio/common';
import { undecodable } from '../domain/contract/undecodable.js';

const MAX_REASON = 300;

function encodingOf(payload: Payload): string {
  const raw = payload?.metadata?.[METADATA_ENCODING_KEY];
  if (!raw) return '(no encoding)';
  try {
    return str(raw);
  } catch {
    return '(unreadable encoding)';
  }
}

export class TolerantPayloadConverter extends CompositePayloadConverter {
  constructor() {
    super(new UndefinedPayloadConverter(), new BinaryPayloadConverter(), new JsonPayloadConverter());
  }

  override fromPayload<T>(payload: Payload, ...rest: unknown[]): T {
    const encoding = encodingOf(payload);
    const size = payload?.data?.length ?? 0;
    if (encoding === 'binary/plain') {
      return undecodable(`binary/plain payload (${size} bytes) where a JSON value is expected`) as T;
    }
    try {
      return (super.fromPayload as (p: Payload, ...r: unknown[]) => T)(payload, ...rest);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return undecodable(`${encoding.slice(0, 100)} payload (${size} bytes) could not be decoded: ${why}`.slice(0, MAX_REASON)) as T;
    }
  }
}

export const payloadConverter = new TolerantPayloadConverter();
