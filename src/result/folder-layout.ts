/**
 * The result folder: the names of everything a run writes into it, in one place. The summary's
 * name can be set (output_json); the others are fixed.
 */

/** The raw records, one request per line, appended as requests finish. */
export const RECORDS_FILE = 'requests.jsonl'
/** The server's Prometheus metrics, one scrape per line, appended as scrapes arrive (src/server-metrics). */
export const SERVER_METRICS_FILE = 'server-metrics.jsonl'
/** The summary's default name (config output_json). */
export const RESULT_FILE = 'bench_result.json'
export const SUMMARY_FILE = 'summary.md'
export const HTML_FILE = 'report.html'
/** Exports (src/report/exports.ts): the levels' figures and the records as tables for other tools. */
export const LEVELS_CSV_FILE = 'levels.csv'
export const REQUESTS_CSV_FILE = 'requests.csv'
/** Written only when asked (bench.parquet, --parquet). */
export const REQUESTS_PARQUET_FILE = 'requests.parquet'
/** `run --paired --gate`'s judgement (src/cli/paired-gate.ts): the comparison as JSON and as Markdown. */
export const GATE_JSON_FILE = 'gate.json'
export const GATE_MD_FILE = 'gate.md'
/** The charts, each as .svg and .png. */
export const CHARTS_DIR = 'charts'

/** The files and folders a run writes into its result folder (and `--force` removes): nothing else. */
export function runFiles(resultFile: string): string[] {
  return [
    RECORDS_FILE,
    resultFile,
    SERVER_METRICS_FILE,
    SUMMARY_FILE,
    HTML_FILE,
    CHARTS_DIR,
    LEVELS_CSV_FILE,
    REQUESTS_CSV_FILE,
    REQUESTS_PARQUET_FILE,
    GATE_JSON_FILE,
    GATE_MD_FILE,
  ]
}
