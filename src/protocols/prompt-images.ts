/**
 * Images sent with a prompt, and the content parts each protocol carries them in. An image's
 * base64 and data URI are built once when the workload is planned, so a request's body only
 * points at strings that already exist.
 */

export interface PromptImage {
  /** image/png or image/jpeg. */
  mediaType: string
  /** The file's bytes in base64 (Anthropic's `source.data`). */
  base64: string
  /** `data:<mediaType>;base64,<base64>`, or a URL a dataset named, passed through as it is. */
  url: string
}

/** An encoded image as a prompt image: its base64 and data URI made here, once. */
export function promptImage(mediaType: string, bytes: Uint8Array): PromptImage {
  const base64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
  return { mediaType, base64, url: `data:${mediaType};base64,${base64}` }
}

/** A URL a dataset names: sent as it is, by the protocols that take URLs. */
export function promptImageUrl(url: string): PromptImage {
  return { mediaType: '', base64: '', url }
}

/** An audio clip sent with a prompt (--audio): WAV bytes in base64, built once when the workload is planned. */
export interface PromptAudio {
  base64: string
  format: 'wav'
}

export function promptAudio(wav: Uint8Array): PromptAudio {
  return { base64: Buffer.from(wav.buffer, wav.byteOffset, wav.byteLength).toString('base64'), format: 'wav' }
}

/** OpenAI chat completions: an `input_audio` part. */
export function chatAudioPart(audio: PromptAudio): Record<string, unknown> {
  return { type: 'input_audio', input_audio: { data: audio.base64, format: audio.format } }
}

/** OpenAI chat completions: `image_url` parts. */
export function chatImagePart(image: PromptImage): Record<string, unknown> {
  return { type: 'image_url', image_url: { url: image.url } }
}

/** OpenAI Responses: `input_image` parts with the URL as a string. */
export function responsesImagePart(image: PromptImage): Record<string, unknown> {
  return { type: 'input_image', image_url: image.url }
}

/** Anthropic Messages: an `image` block, base64 inline, or by URL when a dataset gave one. */
export function messagesImagePart(image: PromptImage): Record<string, unknown> {
  if (image.base64 === '') return { type: 'image', source: { type: 'url', url: image.url } }
  return { type: 'image', source: { type: 'base64', media_type: image.mediaType, data: image.base64 } }
}
