/**
 * Types for parse-prometheus-text-format 1.1.1, which ships none. Only what
 * prometheus-text.ts uses: every value is the text as written ("1.0", "+Inf"), never a number.
 */
declare module 'parse-prometheus-text-format' {
  interface ParsedSample {
    value?: string
    labels?: Record<string, string>
    timestamp_ms?: string
    buckets?: Record<string, string>
    quantiles?: Record<string, string>
    count?: string
    sum?: string
  }
  interface ParsedFamily {
    name: string
    help: string
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED' | string
    metrics: ParsedSample[]
  }
  /** Throws InvalidLineError on a malformed HELP/TYPE or label line. */
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[]
}
