/**
 * A delegated child's result: validated against the JSON Schema its parent gave (ajv) — a result
 * that does not validate is a failure, not a success — and, when large, stored content-addressed
 * under $WARDEN_HOME/artifacts/<sha256>.json so that history holds only the reference.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import type { CheckResultInput, CheckResultOutput } from '../src/domain/contract/activity-types.js';
import { wardenHome } from './turn.js';

/** Results up to this many bytes of JSON stay inline in workflow history. */
export const INLINE_RESULT_BYTES = 2_048;

export function artifactsDir(): string {
  return join(wardenHome(), 'artifacts');
}

export async function checkResult(input: CheckResultInput): Promise<CheckResultOutput> {
  if (input.schema) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    let validate;
    try {
      validate = ajv.compile(input.schema);
    } catch (err) {
      return { ok: false, errors: `the result schema itself is invalid: ${(err as Error).message}` };
    }
    if (input.result === undefined) return { ok: false, errors: 'no result was returned' };
    if (!validate(input.result)) {
      return { ok: false, errors: ajv.errorsText(validate.errors, { dataVar: 'result' }) };
    }
  }
  const json = JSON.stringify(input.result ?? null);
  const bytes = Buffer.byteLength(json);
  if (bytes <= INLINE_RESULT_BYTES) return { ok: true, inline: input.result };
  const sha256 = createHash('sha256').update(json).digest('hex');
  mkdirSync(artifactsDir(), { recursive: true });
  const path = join(artifactsDir(), `${sha256}.json`);
  if (!existsSync(path)) writeFileSync(path, json);
  return { ok: true, ref: { sha256, bytes, path } };
}
