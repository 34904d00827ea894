/**
 * The config files other tools already keep, accepted with `-c FILE` by their shape and mapped to
 * llmbench's settings (docs/configuration.md "Other tools' configs"): a Claude Code settings.json and
 * a Codex CLI config.toml. A reader who shares one gateway between daily coding tools and load tests
 * points llmbench at the same file instead of copying URL, model and key around.
 *
 * Field names as the tools document them:
 *   Claude Code (code.claude.com/docs settings and env-vars): `env` applied over the shell's
 *     environment: ANTHROPIC_BASE_URL (the root; the client appends /v1/messages),
 *     ANTHROPIC_AUTH_TOKEN (sent as Authorization: Bearer), ANTHROPIC_API_KEY (sent as x-api-key),
 *     ANTHROPIC_MODEL, ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL (what the aliases mean),
 *     ANTHROPIC_CUSTOM_HEADERS ("Name: Value" lines); top-level `model` (an id or an alias).
 *   Codex CLI (developers.openai.com/codex config reference; codex-rs ModelProviderInfo): `model`,
 *     `model_provider` (default "openai"), `[model_providers.ID]` with base_url (the client appends
 *     /responses or /chat/completions), env_key, experimental_bearer_token, wire_api ("responses" or
 *     the older "chat"), query_params, http_headers, env_http_headers.
 *
 * A key stored in such a file is never copied into the config: the patch says where it is
 * (api_key_file) and the endpoint reads it when the run starts.
 */
import { isObject } from '../json-object.js'
import { z } from '../zod.js'
import type { ConfigIssue } from './errors.js'
import { normalizeHeaders, splitHeaderLine } from './headers.js'
import { baseUrl, envHeaderTable, envVarName, headerTable, modelId, validate } from './schema.js'
import type { Patch } from './source-schemas.js'

export type ForeignShape = 'claude-code' | 'codex'

/** Which other tool's file this is, by its shape; null = llmbench's own. */
export function foreignShape(format: 'json' | 'toml', raw: unknown): ForeignShape | null {
  if (!isObject(raw)) return null
  if (format === 'json') {
    const env = raw.env
    const anthropic = isObject(env) && Object.keys(env).some((key) => key.startsWith('ANTHROPIC_'))
    return anthropic && raw.llm === undefined && raw.bench === undefined ? 'claude-code' : null
  }
  const codex = raw.model_providers !== undefined || raw.model_provider !== undefined
  return codex && raw.target === undefined && raw.load === undefined ? 'codex' : null
}

export interface ForeignLayer {
  patch: Patch | null
  issues: ConfigIssue[]
  /** What the file asks for that llmbench does not do, said on the terminal. */
  notes?: string[]
}

/** The settings a file of `shape` gives, or the issues (naming the file and the key path) that stop it. */
export function foreignPatch(shape: ForeignShape, file: string, raw: unknown): ForeignLayer {
  return shape === 'claude-code' ? claudeCodePatch(file, raw) : codexPatch(file, raw)
}

// ---------------------------------------------------------------------------------------------------
// Claude Code settings.json
// ---------------------------------------------------------------------------------------------------

/** Claude Code's default when ANTHROPIC_BASE_URL is not set. */
const ANTHROPIC_API = 'https://api.anthropic.com'
const MODEL_ALIASES: Record<string, string> = {
  opus: 'ANTHROPIC_DEFAULT_OPUS_MODEL',
  sonnet: 'ANTHROPIC_DEFAULT_SONNET_MODEL',
  haiku: 'ANTHROPIC_DEFAULT_HAIKU_MODEL',
}

const text = () => z.string({ error: 'a string' })

function claudeCodeSchema() {
  return z.looseObject({
    model: text().optional(),
    env: z.looseObject({
      ANTHROPIC_BASE_URL: baseUrl().optional(),
      ANTHROPIC_AUTH_TOKEN: text().optional(),
      ANTHROPIC_API_KEY: text().optional(),
      ANTHROPIC_MODEL: modelId().optional(),
      ANTHROPIC_CUSTOM_HEADERS: text().optional(),
    }),
  })
}

type ClaudeCode = z.infer<ReturnType<typeof claudeCodeSchema>>

function claudeCodePatch(file: string, raw: unknown): ForeignLayer {
  const checked = validate(claudeCodeSchema(), raw, file)
  if (!checked.ok) return { patch: null, issues: checked.issues }
  const { env, model } = checked.value as ClaudeCode
  const envText = (name: string): string | undefined => {
    const value = env[name]
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
  }
  const headers = customHeaders(envText('ANTHROPIC_CUSTOM_HEADERS'))
  if (typeof headers === 'string')
    return { patch: null, issues: [{ file, path: 'env.ANTHROPIC_CUSTOM_HEADERS', message: headers }] }
  // The token goes as a bearer token, the API key as x-api-key (as Claude Code sends them); with
  // neither in the file, the shell's ANTHROPIC_API_KEY is read like any key variable.
  const keyName = envText('ANTHROPIC_AUTH_TOKEN') !== undefined ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_API_KEY'
  const inFile = envText(keyName) !== undefined
  const chosenModel =
    envText('ANTHROPIC_MODEL') ?? (model === undefined ? undefined : aliasModel(model.trim(), envText))
  // Claude Code runs apiKeyHelper for its key; a load tester running a command out of a config file
  // would be a surprise, so it is said, with where the key comes from instead.
  const helper = isObject(raw) && typeof raw.apiKeyHelper === 'string' && raw.apiKeyHelper.trim() !== ''
  const keyFrom = inFile ? `env.${keyName} in ${file}` : `$${keyName}`
  const notes = helper
    ? [
        `${file}: apiKeyHelper is not run (llmbench runs no command from a config file); the key comes from ${keyFrom}`,
      ]
    : []
  return {
    ...(notes.length === 0 ? {} : { notes }),
    patch: {
      target: {
        base_url: (envText('ANTHROPIC_BASE_URL') ?? ANTHROPIC_API).replace(/\/+$/, ''),
        protocol: 'messages',
        endpoint: '/v1/messages',
        ...(chosenModel === undefined ? {} : { model: chosenModel }),
        api_key_env: keyName,
        api_key_file: inFile ? { file, path: ['env', keyName] } : null,
        auth: keyName === 'ANTHROPIC_AUTH_TOKEN' ? 'bearer' : 'x-api-key',
        ...(Object.keys(headers).length === 0 ? {} : { headers }),
      },
    },
    issues: [],
  }
}

/** A model id, or an alias ("opus", "sonnet[1m]") resolved through the file's own alias variables. */
function aliasModel(model: string, envText: (name: string) => string | undefined): string | undefined {
  const alias = model.replace(/\[[^\]]*\]$/, '').toLowerCase()
  const variable = MODEL_ALIASES[alias]
  if (variable !== undefined) return envText(variable)
  // Claude Code's other aliases name no model id llmbench could send.
  return alias === 'default' || alias === 'opusplan' || model === '' ? undefined : model
}

/** ANTHROPIC_CUSTOM_HEADERS: "Name: Value" per line; a message when a line is not one. */
function customHeaders(lines: string | undefined): Record<string, string> | string {
  if (lines === undefined) return {}
  const table: Record<string, string> = {}
  for (const line of lines.split(/\r?\n/)) {
    if (line.trim() === '') continue
    const parts = splitHeaderLine(line)
    if (parts === null) return 'expected "Name: Value" lines, got a line without "Name:" (not shown)'
    table[parts[0]] = parts[1]
  }
  const checked = validate(headerTable(), table, 'ANTHROPIC_CUSTOM_HEADERS')
  if (!checked.ok) return checked.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')
  return normalizeHeaders(table)
}

// ---------------------------------------------------------------------------------------------------
// Codex CLI config.toml
// ---------------------------------------------------------------------------------------------------

/** Codex's built-in provider, used when model_provider names no [model_providers] table. */
const CODEX_OPENAI = {
  base_url: 'https://api.openai.com/v1',
  env_key: 'OPENAI_API_KEY',
  wire_api: 'responses',
} as const
/** What Codex appends to base_url for each wire API. */
const WIRE_APIS = {
  responses: { protocol: 'responses', endpoint: '/responses' },
  chat: { protocol: 'chat', endpoint: '/chat/completions' },
} as const

function codexProviderSchema() {
  return z.looseObject({
    base_url: baseUrl().optional(),
    env_key: envVarName().optional(),
    experimental_bearer_token: text().optional(),
    wire_api: z.enum(['responses', 'chat'], { error: '"responses" or "chat"' }).optional(),
    query_params: z.record(z.string(), text(), { error: 'a table of query parameters' }).optional(),
    http_headers: headerTable().optional(),
    env_http_headers: envHeaderTable().optional(),
    requires_openai_auth: z.boolean({ error: 'true or false' }).optional(),
  })
}

function codexSchema() {
  return z.looseObject({
    model: modelId().optional(),
    model_provider: z.string({ error: 'a provider id' }).optional(),
    openai_base_url: baseUrl().optional(),
    model_providers: z
      .record(z.string(), codexProviderSchema(), { error: 'a table of providers ([model_providers.ID])' })
      .optional(),
  })
}

type CodexProvider = z.infer<ReturnType<typeof codexProviderSchema>>

function codexPatch(file: string, raw: unknown): ForeignLayer {
  const checked = validate(codexSchema(), raw, file)
  if (!checked.ok) return { patch: null, issues: checked.issues }
  const config = checked.value as z.infer<ReturnType<typeof codexSchema>>
  const id = config.model_provider ?? 'openai'
  const table = config.model_providers?.[id]
  const provider: CodexProvider | undefined =
    table ??
    (id === 'openai'
      ? { ...CODEX_OPENAI, base_url: config.openai_base_url ?? CODEX_OPENAI.base_url }
      : undefined)
  if (provider === undefined) {
    const message = `expected a [model_providers.${id}] table for model_provider = ${JSON.stringify(id)}, got none`
    return { patch: null, issues: [{ file, path: 'model_provider', message }] }
  }
  if (provider.base_url === undefined) {
    const message = 'expected the provider\'s base_url, such as "https://gateway/v1", got nothing'
    return { patch: null, issues: [{ file, path: `model_providers.${id}.base_url`, message }] }
  }
  const wire = WIRE_APIS[provider.wire_api ?? 'responses']
  const tokenPath = ['model_providers', id, 'experimental_bearer_token']
  const keyEnv = provider.env_key ?? (provider.requires_openai_auth === true ? 'OPENAI_API_KEY' : undefined)
  const hasToken =
    provider.experimental_bearer_token !== undefined && provider.experimental_bearer_token !== ''
  return {
    patch: {
      target: {
        base_url: withQuery(provider.base_url.replace(/\/+$/, ''), provider.query_params ?? {}),
        protocol: wire.protocol,
        endpoint: wire.endpoint,
        ...(config.model === undefined ? {} : { model: config.model }),
        ...(keyEnv === undefined ? {} : { api_key_env: keyEnv }),
        api_key_file: hasToken ? { file, path: tokenPath } : null,
        // Codex sends no key for a provider without env_key or a token.
        ...(keyEnv === undefined && !hasToken ? { auth: 'none' as const } : {}),
        ...(provider.http_headers === undefined ? {} : { headers: normalizeHeaders(provider.http_headers) }),
        ...(provider.env_http_headers === undefined
          ? {}
          : { env_headers: normalizeHeaders(provider.env_http_headers) }),
      },
    },
    issues: [],
  }
}

/** base_url with Codex's query_params appended (Azure's api-version travels this way). */
function withQuery(base: string, params: Record<string, string>): string {
  if (Object.keys(params).length === 0) return base
  const url = new URL(base)
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return url.toString().replace(/\/(\?|$)/, '$1')
}
