import { describe, expect, it } from 'vitest';
import { defaultPayloadConverter, toPayloads, type Payload } from '@temporalio/common';
import { payloadConverter } from '../../src/converter/payload-converter.js';
import { isUndecodable, undecodable, undecodableReason } from '../../src/domain/contract/undecodable.js';
import { SIGNAL_SCHEMAS, AgentSpecSchema, TurnSchema } from '../../src/domain/contract/schemas.js';

const enc = (s: string) => new TextEncoder().encode(s);
const payload = (encoding: string | null, data: string | Uint8Array): Payload => ({
  metadata: encoding === null ? {} : { encoding: enc(encoding) },
  data: typeof data === 'string' ? enc(data) : data,
});

describe('TolerantPayloadConverter', () => {
  it('round-trips what the default converter does', () => {
    for (const v of [{ a: 1, b: [true, null, 'x'] }, 'text', 42, null, undefined]) {
      const p = payloadConverter.toPayload(v);
      expect(p).toEqual(defaultPayloadConverter.toPayload(v));
      expect(payloadConverter.fromPayload(p)).toEqual(v);
    }
    expect(toPayloads(payloadConverter, { text: 'hi' })).toEqual(toPayloads(defaultPayloadConverter, { text: 'hi' }));
  });

  it('an unknown encoding becomes the sentinel naming the encoding (the default throws)', () => {
    const p = payload('foo/bar', '{}');
    expect(() => defaultPayloadConverter.fromPayload(p)).toThrow(/Unknown encoding/);
    const v = payloadConverter.fromPayload(p);
    expect(isUndecodable(v)).toBe(true);
    expect(undecodableReason(v)).toMatch(/^foo\/bar payload \(2 bytes\) could not be decoded: Unknown encoding: foo\/bar/);
  });

  it('bytes that are not JSON under json/plain become the sentinel', () => {
    const v = payloadConverter.fromPayload(payload('json/plain', '{"text": '));
    expect(undecodableReason(v)).toMatch(/^json\/plain payload \(9 bytes\) could not be decoded/);
    expect(isUndecodable(payloadConverter.fromPayload(payload('json/plain', new Uint8Array([0xff, 0xfe, 0x00]))))).toBe(true);
    expect(isUndecodable(payloadConverter.fromPayload(payload('json/plain', '')))).toBe(true);
  });

  it('missing metadata becomes the sentinel', () => {
    expect(undecodableReason(payloadConverter.fromPayload(payload(null, '{}')))).toMatch(/^\(no encoding\)/);
    expect(isUndecodable(payloadConverter.fromPayload({} as Payload))).toBe(true);
  });

  it('binary/plain is not {}: it becomes the sentinel (the default yields bytes that pass an object schema)', () => {
    const p = payload('binary/plain', new Uint8Array([1, 2, 3]));
    expect(SIGNAL_SCHEMAS.pause.safeParse(defaultPayloadConverter.fromPayload(p)).success).toBe(true); // today's defect
    const v = payloadConverter.fromPayload(p);
    expect(undecodableReason(v)).toBe('binary/plain payload (3 bytes) where a JSON value is expected');
  });

  it('the reason is bounded', () => {
    const v = payloadConverter.fromPayload(payload('x'.repeat(10_000), '{}'));
    expect(String(v).length).toBeLessThan(400);
  });
});

describe('the sentinel', () => {
  it('is refused by every warden schema even where handlers do not check for it', () => {
    const s = undecodable('test');
    for (const schema of Object.values(SIGNAL_SCHEMAS)) expect(schema.safeParse(s).success).toBe(false);
    expect(AgentSpecSchema.safeParse(s).success).toBe(false);
    expect(TurnSchema.safeParse(s).success).toBe(false);
  });
  it('isUndecodable tells it from anything else', () => {
    expect(isUndecodable(undecodable('r'))).toBe(true);
    for (const x of [undefined, null, {}, 'text', { __wardenUndecodable: 'x' }, 3]) expect(isUndecodable(x)).toBe(false);
    expect(undecodableReason('plain')).toBeNull();
  });
});
