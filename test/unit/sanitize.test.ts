/** The terminal-safe text of src/text/sanitize.ts: every control an agent could send is shown, never interpreted. */
import { describe, expect, it } from 'vitest';
import { jsonText } from '../../src/cli/output.js';
import { visible, visibleBlock, visibleDeep } from '../../src/text/sanitize.js';

const ESC = '\x1b';
// Whatever the output, a terminal must find nothing in it to interpret.
const UNSAFE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe('visible', () => {
  it('leaves plain text (ASCII, accents, CJK, emoji, box drawing) untouched and returns the same string', () => {
    for (const s of ['', 'make the build pass', 'héllo wörld — ‼ ▶ ⏸', '日本語のテキスト', 'emoji 🚀 ok', 'a\tb']) expect(visible(s)).toBe(s);
  });

  it('shows ESC as ␛ and the rest of a CSI sequence as text', () => {
    expect(visible(`${ESC}[2J${ESC}[H`)).toBe('␛[2J␛[H');
    expect(visible(`red ${ESC}[31mX${ESC}[0m`)).toBe('red ␛[31mX␛[0m');
  });

  it('shows OSC sequences: clipboard write (52), window title (0/2), hyperlink (8), with BEL and ST terminators', () => {
    expect(visible(`${ESC}]52;c;aGVsbG8=\x07`)).toBe('␛]52;c;aGVsbG8=␇');
    expect(visible(`${ESC}]0;pwned\x07`)).toBe('␛]0;pwned␇');
    expect(visible(`${ESC}]2;pwned${ESC}\\`)).toBe('␛]2;pwned␛\\');
    expect(visible(`${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\`)).toBe('␛]8;;https://evil.example/␛\\click␛]8;;␛\\');
  });

  it('shows DCS, APC, PM and SOS (7-bit) sequences', () => {
    expect(visible(`${ESC}P1$qm${ESC}\\`)).toBe('␛P1$qm␛\\');
    expect(visible(`${ESC}_apc${ESC}\\`)).toBe('␛_apc␛\\');
    expect(visible(`${ESC}^pm${ESC}\\`)).toBe('␛^pm␛\\');
    expect(visible(`${ESC}Xsos${ESC}\\`)).toBe('␛Xsos␛\\');
  });

  it('shows a lone carriage return as ␍ (no overwriting the line)', () => {
    expect(visible('all tests passed\rFAILED')).toBe('all tests passed␍FAILED');
  });

  it('shows every other C0 control as its Control Picture; keeps \\t', () => {
    expect(visible('\x00\x01\x07\x08\x0b\x0c\x0e\x1a\x1f')).toBe('␀␁␇␈␋␌␎␚␟');
    expect(visible('a\tb')).toBe('a\tb');
    for (let c = 0; c < 0x20; c++) {
      if (c === 9) continue;
      expect(visible(String.fromCharCode(c))).toBe(String.fromCharCode(0x2400 + c));
    }
  });

  it('one line by default: \\n is ␊; multiline keeps \\n and folds \\r\\n to \\n', () => {
    expect(visible('a\nb')).toBe('a␊b');
    expect(visible('a\r\nb')).toBe('a␍␊b');
    expect(visible('a\nb', { multiline: true })).toBe('a\nb');
    expect(visibleBlock('a\r\nb\rc\n')).toBe('a\nb␍c\n');
    expect(visibleBlock(`x\n${ESC}[2J`)).toBe('x\n␛[2J');
  });

  it('shows DEL as ␡', () => {
    expect(visible('a\x7fb')).toBe('a␡b');
  });

  it('shows C1 controls (8-bit CSI, OSC, DCS, ST, …) as \\x9b-style text', () => {
    expect(visible('\x9b2J')).toBe('\\x9b2J');
    expect(visible('\x9d0;pwned\x9c')).toBe('\\x9d0;pwned\\x9c');
    expect(visible('\x80\x85\x90\x9f')).toBe('\\x80\\x85\\x90\\x9f');
    for (let c = 0x80; c <= 0x9f; c++) expect(visible(String.fromCharCode(c))).toBe(`\\x${c.toString(16)}`);
  });

  it('shows bidi embeddings, overrides and isolates as \\u202e-style text', () => {
    expect(visible('access\u202e\u2066 // admin\u2069\u2066')).toBe('access\\u202e\\u2066 // admin\\u2069\\u2066');
    for (const c of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069])
      expect(visible(String.fromCharCode(c))).toBe(`\\u${c.toString(16)}`);
    // Neighbours that do not reorder text are kept.
    expect(visible('\u2029\u2070\u2065')).toBe('\u2029\u2070\u2065');
  });

  it('no output contains anything a terminal interprets, and it is idempotent (every code unit up to U+2FFF)', () => {
    let all = '';
    for (let c = 0; c < 0x3000; c++) all += String.fromCharCode(c);
    const once = visible(all);
    expect(UNSAFE.test(once)).toBe(false);
    expect(visible(once)).toBe(once);
    const block = visibleBlock(all);
    expect(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/.test(block)).toBe(false);
    expect(visibleBlock(block)).toBe(block);
  });

  it('is fast enough for the render loop (a large hostile string in one pass)', () => {
    const hostile = `${ESC}]52;c;aGVsbG8=\x07\r\x9b2J`.repeat(20_000);
    const out = visible(hostile);
    expect(out.includes(ESC)).toBe(false);
    expect(out.startsWith('␛]52;c;aGVsbG8=␇␍\\x9b2J')).toBe(true);
  });
});

describe('visibleDeep', () => {
  it('makes every string of a nested answer visible, one line each; keeps numbers, booleans, null', () => {
    const s = { agentId: 'a', stateReason: `x${ESC}]0;t\x07\ny`, turns: 3, paused: false, lastVerdict: null, refused: [{ what: 'resume', reason: '\x9b2J' }] };
    expect(visibleDeep(s)).toEqual({
      agentId: 'a',
      stateReason: 'x␛]0;t␇␊y',
      turns: 3,
      paused: false,
      lastVerdict: null,
      refused: [{ what: 'resume', reason: '\\x9b2J' }],
    });
    expect(visibleDeep('a\nb', { multiline: true })).toBe('a\nb');
  });
});

describe('--json output (jsonText): control characters are escaped, the value is unchanged', () => {
  const value = { text: `${ESC}]52;c;aGVsbG8=\x07 ${ESC}]0;pwned\x07 ${ESC}[2J a\rb \x9b2J \x7f \u202eevil`, n: [1, null, true] };

  it('JSON.stringify alone escapes C0 (ESC, BEL, CR) but leaves DEL, C1 and bidi controls raw', () => {
    const plain = JSON.stringify(value, null, 2);
    expect(plain).toContain('\\u001b]52;c;aGVsbG8=\\u0007');
    expect(plain).toContain('\\r');
    expect(/[\x00-\x09\x0b-\x1f]/.test(plain)).toBe(false);
    expect(plain).toContain('\x9b2J');
  });

  it('jsonText escapes those too, and parses back to the same value', () => {
    const text = jsonText(value);
    expect(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/.test(text)).toBe(false);
    expect(text).toContain('\\u009b2J');
    expect(text).toContain('\\u202eevil');
    expect(JSON.parse(text)).toEqual(value);
    expect(JSON.parse(jsonText(value, 0))).toEqual(value);
    expect(jsonText(value, 0)).not.toContain('\n');
  });
});
