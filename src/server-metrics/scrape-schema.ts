import { aCount, aList, aNumber, anObject, aString, aTable } from '../records/stored-values.js'
import { z } from '../zod.js'

/**
 * server-metrics.jsonl's line as it is read back (ServerScrape): what the per-level server figures
 * are computed from is typed (the time, the values in the vocabulary); the raw families are an
 * excerpt for a reader and are not read again, so they are only required to be a list. Built on
 * first use, like the record's schema.
 */
let schema: z.ZodType | undefined

export function scrapeSchema(): z.ZodType {
  schema ??= build()
  return schema
}

function build(): z.ZodType {
  const line = { url: aString(), at: aNumber('a time in ms'), run: aString().optional() }
  const buckets = anObject({
    buckets: aList(z.tuple([aNumber(), aNumber()], { error: 'a [bound, count] pair of numbers' })),
    count: aNumber(),
    sum: aNumber('a number or null').nullable(),
  })
  const values = anObject({
    gauges: aTable(aNumber()),
    counters: aTable(aNumber()),
    histograms: aTable(buckets),
    sources: aTable(aString()),
  })
  return z.discriminatedUnion(
    'kind',
    [
      anObject({
        kind: z.literal('scrape'),
        ...line,
        duration_ms: aNumber(),
        values,
        families: aList(z.unknown()).optional(),
        cut: anObject({ lines: aCount(), kept: aCount() }).optional(),
      }),
      anObject({ kind: z.literal('gap'), ...line, duration_ms: aNumber(), error: aString() }),
      anObject({ kind: z.literal('stopped'), ...line, reason: aString() }),
    ],
    { error: 'a scrape line: an object whose "kind" is "scrape", "gap" or "stopped"' },
  )
}
