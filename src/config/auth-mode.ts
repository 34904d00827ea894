import type { Protocol } from '../protocols/names.js'
import { protocolOf } from '../protocols/wire-protocol.js'

/**
 * Where the API key goes in a request (docs/configuration.md "Headers and auth"):
 *   bearer     Authorization: Bearer KEY (OpenAI and most gateways)
 *   api-key    api-key: KEY (Azure OpenAI)
 *   x-api-key  x-api-key: KEY, with anthropic-version (Anthropic)
 *   none       the key is not sent
 *   auto       the protocol's own scheme (x-api-key for messages), else api-key for an Azure OpenAI host, else bearer
 */
export const AUTH_MODES = ['auto', 'bearer', 'api-key', 'x-api-key', 'none'] as const
export type AuthMode = (typeof AUTH_MODES)[number]
export type PlacedAuth = Exclude<AuthMode, 'auto'>

/** Hosts that take Azure's api-key header: Azure OpenAI and the AI Foundry / Cognitive Services names. */
const AZURE_HOST = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)$/i

/** `auto` settled for one target; any other mode is taken as given. */
export function placeAuth(mode: AuthMode, protocol: Protocol, baseUrl: string): PlacedAuth {
  return mode === 'auto' ? autoPlacement(protocol, baseUrl).placed : mode
}

/** Why `auto` placed the key where it did, as said before a run ("auto: the messages protocol"). */
export function autoReason(protocol: Protocol, baseUrl: string): string {
  return autoPlacement(protocol, baseUrl).reason
}

/** The one decision of `auto`: the protocol's own scheme first, then the host's. */
function autoPlacement(protocol: Protocol, baseUrl: string): { placed: PlacedAuth; reason: string } {
  const own = protocolOf(protocol).autoAuth
  if (own !== null) return { placed: own, reason: `auto: the ${protocol} protocol` }
  if (AZURE_HOST.test(hostOf(baseUrl))) return { placed: 'api-key', reason: 'auto: an Azure OpenAI host' }
  return { placed: 'bearer', reason: 'auto: neither the protocol nor the host asks for another header' }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    return ''
  }
}
