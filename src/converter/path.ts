/**
 * Where the payload converter module is, for Temporal's `payloadConverterPath` (the SDK loads it with
 * `require`, and webpacks it into the workflow bundle). Always the compiled file under dist/: run
 * from sources (vitest), `require` cannot load TypeScript, so `npm run build` must have run.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
/** dist/src/converter/payload-converter.js, from either dist/src/converter/path.js or src/converter/path.ts. */
export const PAYLOAD_CONVERTER_PATH = here.endsWith('.js')
  ? fileURLToPath(new URL('./payload-converter.js', import.meta.url))
  : fileURLToPath(new URL('../../dist/src/converter/payload-converter.js', import.meta.url));

export function payloadConverterPath(): string {
  if (!existsSync(PAYLOAD_CONVERTER_PATH)) {
    throw new Error(`warden's payload converter is not built (${PAYLOAD_CONVERTER_PATH} is missing); run \`npm run build\``);
  }
  return PAYLOAD_CONVERTER_PATH;
}

/** The `dataConverter` option for Client, Worker and bundleWorkflowCode. */
export function wardenDataConverter(): { payloadConverterPath: string } {
  return { payloadConverterPath: payloadConverterPath() };
}
