/**
 * Output text the tokenizer counts exactly, in UTF-16 units: about 256 KiB. Past it the count is
 * extrapolated from that head at its own rate. A broken model or a batching proxy can stream
 * megabytes without a space; counting all of it held the main thread (the run's schedule, its
 * timers, its signals) for seconds per request, where this bounds a request to a fraction of one.
 */
export const EXACT_COUNT_CHARS = 256 * 1024

/** Tokens of `text`: exact up to EXACT_COUNT_CHARS; beyond, the head's rate times the whole length. */
export function boundedCount(
  text: string,
  count: (text: string) => number,
): { tokens: number; sampledChars: number | null } {
  if (text.length <= EXACT_COUNT_CHARS) return { tokens: text === '' ? 0 : count(text), sampledChars: null }
  // Cut at the last space of the head where there is one, so no word is split; not inside a
  // surrogate pair either way.
  const space = text.lastIndexOf(' ', EXACT_COUNT_CHARS)
  let end = space > EXACT_COUNT_CHARS / 2 ? space : EXACT_COUNT_CHARS
  if (isHighSurrogate(text.charCodeAt(end - 1))) end--
  const head = text.slice(0, end)
  return { tokens: Math.round((count(head) * text.length) / head.length), sampledChars: head.length }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}
