/**
 * Where the API key goes in a request (docs/configuration.md "Headers and auth"):
 *   bearer     Authorization: Bearer KEY (OpenAI and most gateways)
 *   api-key    api-key: KEY (Azure OpenAI)
 *   x-api-key  x-api-key: KEY, with anthropic-version (Anthropic)
 *   none       the key is not sent
 *   auto       x-api-key for the messages protocol, api-key for an Azure OpenAI host, else bearer
 */
export const AUTH_MODES = ['auto', 'bearer', 'api-key', 'x-api-key', 'none'] as const
export type AuthMode = (typeof AUTH_MODES)[number]
export type PlacedAuth = Exclude<AuthMode, 'auto'>

/** Hosts that take Azure's api-key header: Azure OpenAI and the AI Foundry / Cognitive Services names. */
const AZURE_HOST = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)$/i

/** `auto` settled for one target; any other mode is taken as given. */
export function placeAuth(mode: AuthMode, protocol: string, baseUrl: string): PlacedAuth {
  if (mode !== 'auto') return mode
  if (protocol === 'messages') return 'x-api-key'
  return AZURE_HOST.test(hostOf(baseUrl)) ? 'api-key' : 'bearer'
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    return ''
  }
}
