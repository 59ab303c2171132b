/**
 * Text for a person's terminal, with every control character shown instead of obeyed: names,
 * reasons and results come from agents and servers, and an ESC (colours, cursor moves, OSC 8
 * links, OSC 52 clipboard writes), a BEL, a NUL or a lone carriage return in one must not rewrite
 * the operator's screen. Newlines and tabs stay (loopguard's own layout); C1 controls, DEL and the
 * Unicode line separators are escaped too (JSON.stringify leaves C1 raw). JSON lines stay valid.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/** `\u001b`: readable on a terminal, and in a JSON line the very escape that reads back as the character. */
const shown = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

export function escapeControls(text: string): string {
  return text.replace(CONTROL, shown);
}
