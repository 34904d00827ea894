/**
 * A /metrics body cut down, line by line as its chunks arrive, to what the vocabulary reads: the
 * sample and TYPE lines of its families, and of those, the series of the model under test. A server
 * can publish 100,000 series (many models, many label sets): parsing all of them on the run's main
 * thread held it for long enough to cost 13% of the measured throughput, stored 5.3 MB per scrape, and
 * added every model's `running` together (299,996 at c=2). Scanning a chunk is a few microseconds a
 * line and happens as the chunks come in, so no turn of the event loop does much; the parser then
 * sees a few hundred lines.
 *
 * The model is matched on the label engines put it in (vLLM, SGLang, TensorRT-LLM: model_name; the
 * Dynamo frontend: model, in lower case), without regard to case. Lines without such a label (llama.cpp,
 * TGI, DCGM) are kept. When labelled series exist but none is the run's model (a served-model-name
 * that differs from the name the run sends), every series is kept, and the outcome says so.
 */

/** What the cut left out, for the scrape's line in server-metrics.jsonl and the log. */
export interface FilterOutcome {
  /** The lines kept, as exposition text. */
  text: string
  /** Lines in the body. */
  lines: number
  /** Lines kept. */
  kept: number
  /** The model the series were filtered to; null when the run's model is not known. */
  model: string | null
  /** Sample lines of the vocabulary's families labelled with another model: left out when `model_matched`. */
  other_model_lines: number
  /** Some series carried the run's model in their label. */
  model_matched: boolean
  /**
   * The body's first lines (up to HEAD_CHARS), for telling a page that is not the exposition format
   * from one that is but has none of the vocabulary's families, when nothing was kept.
   */
  head: string
}

const HEAD_CHARS = 64 * 1024

/** The suffixes a family's sample names carry (exposition and OpenMetrics); _created lines carry nothing used. */
const SAMPLE_SUFFIXES = ['_total', '_bucket', '_count', '_sum', '_gcount', '_gsum']
const MODEL_LABEL = /[{,]\s*(?:model_name|model)\s*=\s*"((?:[^"\\]|\\.)*)"/
const TYPE_LINE = /^#\s*TYPE\s+(\S+)/

export class ExpositionFilter {
  private partial = ''
  private readonly kept: string[] = []
  /** Lines of other models, held until a line of the run's model shows they can go. */
  private others: string[] = []
  private lines = 0
  private otherLines = 0
  private matched = false
  private head = ''
  private headFull = false
  private readonly model: string | null

  constructor(
    private readonly families: ReadonlySet<string>,
    model: string | null,
  ) {
    this.model = model === null || model === '' ? null : model.toLowerCase()
  }

  /** A chunk of the body (text); whole lines are filtered now, a torn last one waits for the next. */
  push(chunk: string): void {
    const text = this.partial + chunk
    const lastNewline = text.lastIndexOf('\n')
    if (lastNewline < 0) {
      this.partial = text
      return
    }
    this.partial = text.slice(lastNewline + 1)
    let start = 0
    while (start <= lastNewline) {
      const end = text.indexOf('\n', start)
      this.line(text.slice(start, end))
      start = end + 1
    }
  }

  end(): FilterOutcome {
    if (this.partial !== '') this.line(this.partial)
    this.partial = ''
    const lines = this.matched ? this.kept : [...this.kept, ...this.others]
    return {
      text: `${lines.join('\n')}\n`,
      lines: this.lines,
      kept: lines.length,
      model: this.model,
      other_model_lines: this.otherLines,
      model_matched: this.matched,
      head: this.head,
    }
  }

  private line(raw: string): void {
    this.lines++
    if (!this.headFull) {
      if (this.head.length + raw.length < HEAD_CHARS) this.head += `${raw}\n`
      else this.headFull = true
    }
    const line = raw.trim()
    if (line === '') return
    if (line.startsWith('#')) {
      const type = TYPE_LINE.exec(line)
      if (type !== null && this.wanted(type[1] as string)) this.kept.push(line)
      return
    }
    const nameEnd = line.search(/[{\s]/)
    if (!this.wanted(nameEnd < 0 ? line : line.slice(0, nameEnd))) return
    const label = this.model === null ? null : MODEL_LABEL.exec(line)
    if (label === null || label === undefined) {
      this.kept.push(line)
      return
    }
    if ((label[1] as string).toLowerCase() === this.model) {
      this.matched = true
      this.others = []
      this.kept.push(line)
      return
    }
    this.otherLines++
    if (!this.matched) this.others.push(line)
  }

  /** A sample or TYPE name of a family the vocabulary reads. */
  private wanted(name: string): boolean {
    if (this.families.has(name)) return true
    for (const suffix of SAMPLE_SUFFIXES)
      if (name.endsWith(suffix) && this.families.has(name.slice(0, -suffix.length))) return true
    return false
  }
}
