const MAX_SHOWN = 60

/**
 * How a found value is shown in a message: JSON, truncated to 60 characters so one huge value cannot
 * flood the terminal. Non-finite numbers and bigints are shown as themselves (JSON would print null).
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'bigint' || (typeof value === 'number' && !Number.isFinite(value)))
    return String(value)
  const json = JSON.stringify(value) ?? String(value)
  return json.length > MAX_SHOWN ? `${json.slice(0, MAX_SHOWN - 3)}...` : json
}
