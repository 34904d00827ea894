/**
 * settings.json as people keep it: JSONC (VS Code style), i.e. JSON plus `//` and `/* *\/` comments and
 * trailing commas. Parsed with Microsoft's jsonc-parser (the one VS Code uses); a syntax error comes back
 * as the offset of the first problem and what was expected there, for a line/column message.
 */
import { type Node, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser'
import { CONFIG_MAX_NESTING, tooDeep } from '../json-nesting.js'

export type JsoncResult = { ok: true; value: unknown } | { ok: false; offset: number; expected: string }

const OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false }

/** What the parser wanted where it stopped, by jsonc-parser's error code name. */
const EXPECTED: Record<string, string> = {
  InvalidSymbol: 'a JSON value',
  InvalidNumberFormat: 'a number',
  PropertyNameExpected: 'a property name in double quotes',
  ValueExpected: 'a JSON value',
  ColonExpected: '":"',
  CommaExpected: '","',
  CloseBraceExpected: '"," or "}"',
  CloseBracketExpected: '"," or "]"',
  EndOfFileExpected: 'end of file after the top-level value',
  InvalidCommentToken: 'a comment',
  UnexpectedEndOfComment: 'a comment closed with "*/"',
  UnexpectedEndOfString: 'a complete double-quoted string (no line breaks, valid \\ escapes)',
  UnexpectedEndOfNumber: 'a complete number',
  InvalidUnicode: 'a \\u escape with four hex digits',
  InvalidEscapeCharacter: 'a valid \\ escape',
  InvalidCharacter: 'no raw control characters in a string',
}

export function parseJsonc(text: string): JsoncResult {
  // The parser and nodeValue recurse once per level: a file nested thousands deep overflowed the stack.
  const deep = tooDeep(text, CONFIG_MAX_NESTING)
  if (deep !== null)
    return { ok: false, offset: deep.offset, expected: `at most ${CONFIG_MAX_NESTING} levels of nesting` }
  const errors: ParseError[] = []
  const root = parseTree(text, errors, OPTIONS)
  const first = errors[0]
  if (first !== undefined) {
    // An unknown token where a key belongs ('llm') is reported as a bad symbol, then as a missing key.
    const firstName = printParseErrorCode(first.error)
    const next = errors[1] === undefined ? undefined : printParseErrorCode(errors[1].error)
    const name = firstName === 'InvalidSymbol' && next === 'PropertyNameExpected' ? next : firstName
    return { ok: false, offset: first.offset, expected: EXPECTED[name] ?? name }
  }
  return { ok: true, value: root === undefined ? undefined : nodeValue(root) }
}

/**
 * The tree's value with JSON.parse's semantics: keys become own properties (a "__proto__" key is data,
 * not the object's prototype, which jsonc-parser's own getNodeValue would set) and a repeated key's last
 * value wins.
 */
function nodeValue(node: Node): unknown {
  switch (node.type) {
    case 'object': {
      const object: Record<string, unknown> = {}
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? []
        if (key === undefined || value === undefined) continue
        Object.defineProperty(object, String(key.value), {
          value: nodeValue(value),
          enumerable: true,
          writable: true,
          configurable: true,
        })
      }
      return object
    }
    case 'array':
      return (node.children ?? []).map(nodeValue)
    default:
      return node.value
  }
}
