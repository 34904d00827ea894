import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type CommandSpec, numberList, parseFlags } from '../../src/cli/args.js'
import { CliError, EXIT } from '../../src/cli/exit-codes.js'
import { closestName } from '../../src/closest-name.js'

const RUN: CommandSpec = {
  name: 'run',
  summary: 'run',
  usage: 'llmbench run',
  flags: [
    { name: 'levels', type: 'string', help: 'levels' },
    { name: 'level-span', type: 'string', help: 'span' },
    { name: 'model', type: 'string', help: 'model' },
  ],
}

function usageError(argv: string[], allowPositionals = false): string {
  try {
    parseFlags(RUN, argv, allowPositionals)
  } catch (error) {
    assert.ok(error instanceof CliError)
    assert.equal(error.exitCode, EXIT.usage)
    return error.message
  }
  assert.fail(`${argv.join(' ')} was accepted`)
}

test('an unknown flag names the nearest flag of the command, right after its name; a far one names none', () => {
  assert.match(
    usageError(['--level', '1,2']),
    /^llmbench run: Unknown option '--level' \(did you mean --levels\?\)/,
  )
  assert.match(usageError(['--modle', 'm']), /Unknown option '--modle' \(did you mean --model\?\)/)
  // Also when Node adds its sentence about positionals after the name.
  assert.match(usageError(['--level', '1,2'], true), /Unknown option '--level' \(did you mean --levels\?\)/)
  assert.doesNotMatch(usageError(['--concurrency', '4']), /did you mean/)
})

test('closestName: the nearest within two edits, else one containing the other, else none', () => {
  assert.equal(closestName('level', ['level-span', 'levels']), 'levels')
  assert.equal(closestName('timeout', ['model', 'timeout_seconds']), 'timeout_seconds')
  assert.equal(closestName('concurrency', ['levels', 'model']), undefined)
})

test('numberList: numbers, and any other part as the text written, so a message can echo it', () => {
  assert.deepEqual(numberList('1, 4,8'), [1, 4, 8])
  assert.deepEqual(numberList('1,x'), [1, 'x'])
  assert.deepEqual(numberList('1,,2'), [1, '', 2])
})
