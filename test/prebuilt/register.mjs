// `node --import ./test/prebuilt/register.mjs`: serve each .ts module from .test-build/ (hooks.mjs).
import { register } from 'node:module'

register('./hooks.mjs', import.meta.url)
