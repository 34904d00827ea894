/**
 * A likely intended name for a mistyped one, for "did you mean" hints (config keys, flags): the
 * nearest a small edit away ("modle" / "model", "level" / "levels"), else one containing the other
 * ("timeout" / "timeout_seconds").
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase()
  let nearest: { name: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(lower, candidate)
    if (distance <= 2 && (nearest === undefined || distance < nearest.distance))
      nearest = { name: candidate, distance }
  }
  return nearest?.name ?? known.find((k) => lower.length >= 3 && (k.includes(lower) || lower.includes(k)))
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost))
    }
    prev = row
  }
  return prev[b.length] ?? 0
}
