/**
 * Polls `condition` until it holds: tests wait for the state they need (requests in flight, records on
 * disk), never for a fixed window that a busy machine may not honour. Bounded: throws after `limitMs`.
 */
export async function waitUntil(condition: () => boolean, what: string, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up after ${limitMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
