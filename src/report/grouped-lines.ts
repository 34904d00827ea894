/**
 * Lines said about several levels, said once: "c=8, c=16, c=32: note: ..." instead of one line per
 * level (a run with errors printed 20+ near-identical lines). Grouped by their exact text, in the
 * order each text first appeared; a counted line ("3× HTTP 503: busy") sums its counts and names
 * each level's share: "12× HTTP 503: busy (c=8: 3, c=16: 9)".
 */
export class GroupedLines {
  private readonly groups = new Map<string, { names: string[]; counts: number[] }>()

  add(name: string, text: string, count?: number): void {
    let group = this.groups.get(text)
    if (group === undefined) {
      group = { names: [], counts: [] }
      this.groups.set(text, group)
    }
    group.names.push(name)
    if (count !== undefined) group.counts.push(count)
  }

  /** Uncounted lines: "c=8, c=16: text"; counted ones: "12× text (c=8: 3, c=16: 9)". */
  lines(indent = ''): string[] {
    const out: string[] = []
    for (const [text, { names, counts }] of this.groups) {
      if (counts.length !== names.length) {
        out.push(`${indent}${[...new Set(names)].join(', ')}: ${text}`)
        continue
      }
      const total = counts.reduce((sum, count) => sum + count, 0)
      const shares =
        names.length === 1 ? '' : ` (${names.map((name, i) => `${name}: ${counts[i]}`).join(', ')})`
      out.push(`${indent}${total}× ${text}${shares}`)
    }
    return out
  }
}
