/** `warden serve`'s pure parts: the pages escape untrusted text, the route, the steering form, --listen. */
import { describe, expect, it } from 'vitest';
import { MAX_STEER_CHARS, confirmPage, escapeHtml, messagePage } from '../../src/serve/page.js';
import { parseListen, route, steerText } from '../../src/serve/server.js';

const FORM = 'application/x-www-form-urlencoded';

describe('pages', () => {
  it('escape HTML and show control and bidi characters instead of applying them', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'q'`)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;');
    expect(escapeHtml('a\u202eb\x1b[2J')).toBe('a\\u202eb␛[2J');
    const html = messagePage('Done: <b>x</b>', 'text "</p><img src=x onerror=alert(1)>"');
    expect(html).not.toMatch(/<b>|<img/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('the confirmation page posts back to itself, loads nothing, and keeps rejected steering text escaped', () => {
    const html = confirmPage('fixer', 'steer', 1_764_000_000, { error: 'text: too long', text: '</textarea><script>x()</script>' });
    expect(html).toContain('<form method="post">');
    expect(html).not.toMatch(/action=|<script|src=|href=/);
    expect(html).toContain('&lt;/textarea&gt;&lt;script&gt;x()&lt;/script&gt;</textarea>');
    expect(html).toContain(`maxlength="${MAX_STEER_CHARS}"`);
    expect(confirmPage('fixer', 'resume', 1_764_000_000)).not.toContain('<textarea');
  });

  it("an escalation's confirm page shows its finding, escaped and bounded; unknown, it says so", () => {
    const html = confirmPage('fixer', 'dismiss', 1_764_000_000, {
      finding: { escalation: 2, pattern: 'SPIRALING', message: `retries <img src=x onerror=alert(1)> "build" \u202e${'x'.repeat(700)}` },
    });
    const shown = /<p id="finding">(.*?)<\/p>/s.exec(html)![1]!;
    expect(shown).toMatch(/^Escalation #2: <strong>SPIRALING<\/strong> — retries &lt;img src=x onerror=alert\(1\)&gt; &quot;build&quot; \\u202e/);
    expect(shown).not.toMatch(/<img|\u202e/);
    expect(shown.length).toBeLessThan(800);
    expect(html).toContain('while the agent waits on escalation #2');
    expect(confirmPage('fixer', 'dismiss', 1_764_000_000, { finding: undefined })).toMatch(/did not say in time which finding/);
    expect(confirmPage('fixer', 'steer', 1_764_000_000)).not.toContain('id="finding"');
  });
});

describe('requests', () => {
  it('route: /agents/<id>/<action>, percent-decoded; anything else is not a link', () => {
    expect(route('/agents/fixer.1/resume')).toEqual({ agentId: 'fixer.1', action: 'resume' });
    expect(route('/agents/a%2Fb/resume/')).toEqual({ agentId: 'a/b', action: 'resume' });
    expect(route('/agents/fixer')).toBeNull();
    expect(route('/agents/x/resume/extra')).toBeNull();
    expect(() => route('/agents/%E0%A4%A/resume')).toThrow(/percent-encoding/);
  });

  it('steerText: one text field of a form, trimmed, 1 to MAX_STEER_CHARS characters', () => {
    expect(steerText('text=Look+at+%3Cpaths%3E', FORM)).toEqual({ ok: true, text: 'Look at <paths>' });
    expect(steerText('text=%20%20', FORM)).toMatchObject({ ok: false, message: /write what the agent should do/ });
    expect(steerText(`text=${'é'.repeat(MAX_STEER_CHARS + 1)}`, FORM)).toMatchObject({ ok: false, message: /at most 1000 characters \(got 1001\)/ });
    expect(steerText(`text=${'é'.repeat(MAX_STEER_CHARS)}`, `${FORM}; charset=utf-8`)).toMatchObject({ ok: true });
    expect(steerText('text=a&text=b', FORM)).toMatchObject({ ok: false, message: /exactly one/ });
    expect(steerText('{"text":"x"}', 'application/json')).toMatchObject({ ok: false, message: /x-www-form-urlencoded/ });
  });

  it('--listen: host:port, IPv6 in brackets; anything else names the flag', () => {
    expect(parseListen('127.0.0.1:8788')).toEqual({ ok: true, host: '127.0.0.1', port: 8788 });
    expect(parseListen('[::1]:0')).toEqual({ ok: true, host: '::1', port: 0 });
    expect(parseListen('localhost:80')).toEqual({ ok: true, host: 'localhost', port: 80 });
    for (const bad of ['8788', 'host:', 'host:99999', 'http://x:1', '::1:80']) expect(parseListen(bad)).toMatchObject({ ok: false, reason: /^--listen: / });
  });
});
