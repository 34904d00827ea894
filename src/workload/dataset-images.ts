import { readFileSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import { type PromptImage, promptImage, promptImageUrl } from '../protocols/prompt-images.js'
import { IMAGE_BYTES_BUDGET } from './prompt-image-set.js'

/**
 * A dataset row's own images (`"images": ["photo.jpg", "https://host/x.png"]` in JSONL): URLs go to
 * the server as they are (it fetches them); local files, relative to the dataset file, are read once
 * before the run and sent inline as data URIs with the media type their first bytes say. The files
 * read are held in memory for the run, so they share the synthetic images' budget.
 */

/** The media types servers take, by the file's magic bytes; null for anything else. */
export function imageMediaType(bytes: Uint8Array): string | null {
  const at = (i: number): number => bytes[i] ?? -1
  if (at(0) === 0x89 && at(1) === 0x50 && at(2) === 0x4e && at(3) === 0x47) return 'image/png'
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'image/jpeg'
  if (at(0) === 0x47 && at(1) === 0x49 && at(2) === 0x46 && at(3) === 0x38) return 'image/gif'
  const ascii = (from: number, to: number): string => String.fromCharCode(...bytes.subarray(from, to))
  if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp'
  return null
}

/** Resolves every row's image references; a problem is an Error naming the file, the line and the image. */
export class DatasetImages {
  private readonly byFile = new Map<string, PromptImage>()
  private bytes = 0

  constructor(private readonly datasetPath: string) {}

  /** The row's images, or the message of what is wrong with one. */
  resolve(references: readonly string[], line: number): PromptImage[] | string {
    const images: PromptImage[] = []
    for (const reference of references) {
      if (/^https?:\/\//i.test(reference)) {
        images.push(promptImageUrl(reference))
        continue
      }
      const file = isAbsolute(reference) ? reference : resolve(dirname(this.datasetPath), reference)
      const known = this.byFile.get(file)
      if (known !== undefined) {
        images.push(known)
        continue
      }
      let bytes: Uint8Array
      try {
        bytes = readFileSync(file)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        return `line ${line}: image ${JSON.stringify(reference)}: ${code === 'ENOENT' ? `no file ${file}` : `cannot read ${file} (${(error as Error).message})`}`
      }
      const mediaType = imageMediaType(bytes)
      if (mediaType === null)
        return `line ${line}: image ${JSON.stringify(reference)}: not a PNG, JPEG, GIF or WebP file (by its first bytes)`
      this.bytes += bytes.byteLength
      if (this.bytes > IMAGE_BYTES_BUDGET)
        return `line ${line}: image ${JSON.stringify(reference)}: the dataset's images pass ${IMAGE_BYTES_BUDGET / 1048576} MB, the most held in memory for a run (use URLs for more)`
      const image = promptImage(mediaType, bytes)
      this.byFile.set(file, image)
      images.push(image)
    }
    return images
  }
}
