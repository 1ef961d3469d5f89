/**
 * zod's entry modules re-export a bundle of error messages in 64 languages (`z.locales`), loaded with the first
 * schema and kept in memory for the process's life (about 1 MiB of heap and 2 MiB resident). The gateway answers in
 * English only and never switches zod's language, so its process resolves that bundle to a module offering English
 * alone (zod-english-only.ts); zod's own default, English, is loaded as before.
 *
 * Installed by the entry points before anything imports zod. Where this Node has no synchronous module hooks
 * (module.registerHooks: Node 22.15 / 23.5 and newer) it changes nothing: zod loads its bundle as usual.
 */
import * as nodeModule from 'node:module';

/** The bundle, as zod's entry modules (v4/core/index.js, v4/classic/external.js, v4/mini/external.js) import it. */
const LOCALE_BUNDLE = '../locales/index.js';
const ZOD_ENTRY_DIRECTORY = /\/node_modules\/zod\/v4\/(?:core|classic|mini)\/[^/]+$/;
const ENGLISH_ONLY = new URL('./zod-english-only.js', import.meta.url).href;

let installed = false;

/** True when `specifier`, imported from `parentURL`, is zod's bundle of every language. */
export function isZodLocaleBundle(specifier: string, parentURL: string | undefined): boolean {
  return specifier === LOCALE_BUNDLE && parentURL !== undefined && ZOD_ENTRY_DIRECTORY.test(parentURL);
}

/** Resolves zod's bundle of every language to the English-only module from here on (once; false where unsupported). */
export function loadZodInEnglishOnly(): boolean {
  if (installed) return true;
  const register = (nodeModule as { registerHooks?: typeof nodeModule.registerHooks }).registerHooks;
  if (typeof register !== 'function') return false;
  register({
    resolve(specifier, context, nextResolve) {
      if (isZodLocaleBundle(specifier, context.parentURL)) return { url: ENGLISH_ONLY, format: 'module', shortCircuit: true };
      return nextResolve(specifier, context);
    },
  });
  installed = true;
  return true;
}
