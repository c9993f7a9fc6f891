/** Text for chat (IRC lines, Slack and Markdown bodies): one line, escaped, never a mention or a link. Pure. */
import { truncate } from '../contract/limits.js';

/** One line of text for chat: control characters (CR, LF, IRC formatting) become spaces. */
export function oneLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  return truncate(
    text
      .replace(/[\x00-\x1f\x7f]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
    max,
  );
}

/** Slack mrkdwn escaping: only &, < and > are special (`<!channel>`, `<@U…>`, `<url|label>`). */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** U+2060 WORD JOINER: invisible, and no mention or link syntax can run through it. */
export const WORD_JOINER = '\u2060';

/**
 * Mattermost and Rocket.Chat render incoming webhook text as Markdown and turn `@channel`,
 * `@here`, `@all` (and `@user`) into pings. Text from an agent must do neither: an invisible word
 * joiner goes after every `@` that starts a name (it reads the same, but names no one), and
 * between the brackets and parenthesis of Markdown link and image syntax (`[x](url)`,
 * `![i](url)`, `[x][ref]`), which then shows as the literal text.
 */
export function markdownNeutralise(text: string): string {
  return text
    .replace(/@(?=[\p{L}\p{N}_.-])/gu, `@${WORD_JOINER}`)
    .replace(/\](?=[([])/g, `]${WORD_JOINER}`)
    .replace(/!(?=\[)/g, `!${WORD_JOINER}`);
}

/**
 * Untrusted text (from an agent, its task, an evaluator) for a chat body: one line, cut to `max`
 * characters, safe in Slack mrkdwn and in Mattermost and Rocket.Chat Markdown at once (the `slack`
 * format goes to all three).
 */
export function chatText(text: string, max: number): string {
  return slackEscape(markdownNeutralise(oneLine(text, max)));
}
