/** `warden top`'s bounded fan-out (status queries, intents): at most n in flight, results in order. */
import { expect, it } from 'vitest';
import { mapLimit } from '../../src/roster/source.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

it('runs at most n at once and keeps the order of the items', async () => {
  let inFlight = 0;
  let most = 0;
  const out = await mapLimit([5, 1, 4, 2, 3, 0, 6], 3, async (x) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    for (let i = 0; i < x; i++) await tick();
    inFlight -= 1;
    return x * 10;
  });
  expect(out).toEqual([50, 10, 40, 20, 30, 0, 60]);
  expect(most).toBe(3);
});

it('no items: no calls; a limit below 1 still runs one at a time', async () => {
  expect(await mapLimit([], 4, async () => 1)).toEqual([]);
  let inFlight = 0;
  let most = 0;
  const out = await mapLimit(['a', 'b'], 0, async (s) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    await tick();
    inFlight -= 1;
    return s.toUpperCase();
  });
  expect(out).toEqual(['A', 'B']);
  expect(most).toBe(1);
});

it('a failure rejects the whole map', async () => {
  await expect(mapLimit([1, 2, 3], 2, async (x) => (x === 2 ? Promise.reject(new Error('query failed')) : x))).rejects.toThrow('query failed');
});
