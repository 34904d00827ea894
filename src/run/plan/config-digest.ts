import { createHash } from 'node:crypto'
import { publicTarget } from '../../config/public-target.js'
import type { RunConfig } from '../../config/types.js'

/**
 * A digest of everything that makes two shards parts of the same run: target, load, workload,
 * client behaviour and what is measured. Where results go, how many threads and history are left
 * out: shards differ in those legitimately. The key is never part of the config.
 */
export function configDigest(config: RunConfig): string {
  const { target, load, workload, client, metrics, pricing } = config
  // No credential enters the digest, not even hashed: the base URL's password and secret header values are left out.
  const canonical = JSON.stringify(
    sortKeys({ target: publicTarget(target), load, workload, client, metrics, pricing }),
  )
  return `sha256:${createHash('sha256').update(canonical).digest('hex').slice(0, 32)}`
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  )
}
