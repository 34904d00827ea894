import type { LengthSpec } from './lengths.js'

/**
 * Workload presets for three common shapes of traffic: chat (input ≈ output), RAG (input ≫ output) and
 * code generation (output ≫ input). Lengths vary around their means as real traffic does; any
 * length set in a file or flag overrides the preset's.
 */
export interface Profile {
  name: string
  description: string
  input: LengthSpec
  output: LengthSpec
}

export const PROFILES: Readonly<Record<string, Profile>> = Object.freeze({
  chat: {
    name: 'chat',
    description: 'conversational turns: input ≈ output',
    input: { kind: 'normal', mean: 512, sd: 128 },
    output: { kind: 'normal', mean: 512, sd: 128 },
  },
  rag: {
    name: 'rag',
    description: 'retrieval-augmented answers: long context, short answer (input ≫ output)',
    input: { kind: 'normal', mean: 3072, sd: 512 },
    output: { kind: 'normal', mean: 256, sd: 64 },
  },
  codegen: {
    name: 'codegen',
    description: 'code generation: short instruction, long output (output ≫ input)',
    input: { kind: 'normal', mean: 384, sd: 96 },
    output: { kind: 'normal', mean: 1536, sd: 256 },
  },
})

export const PROFILE_NAMES = Object.keys(PROFILES)
