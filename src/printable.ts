/** C0 and C1 control characters other than tab and line feed. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g

/**
 * A message that echoes a file's content, safe to print: control characters (NUL, ESC, CR, ...) are
 * written as \xNN so a binary or hostile file cannot garble or drive the terminal. Line breaks and tabs
 * stay, since messages span lines.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}
