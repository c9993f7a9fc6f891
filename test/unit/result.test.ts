import { expect, test } from 'vitest';
import { extractResult } from '../../src/domain/contract/result.js';

test.each([
  ['TASK COMPLETE {"answer": 42}', { answer: 42 }],
  ['Done.\nTASK COMPLETE: {"files": ["a.ts"]}', { files: ['a.ts'] }],
  ['TASK COMPLETE\n```json\n{"ok": true}\n```\nThanks!', { ok: true }],
  ['TASK COMPLETE [1, 2]', [1, 2]],
  ['TASK COMPLETE — all done', undefined],
  ['TASK COMPLETE {not json', undefined],
  ['no marker {"answer": 1}', undefined],
])('%j → %j', (text, expected) => {
  expect(extractResult(text, 'TASK COMPLETE')).toEqual(expected);
});
