/**
 * kysely ships as some 250 small modules, and Node keeps a record of each loaded module (its source, compiled
 * module and namespace) for the process's life. The build bundles kysely into one module (scripts/vendor.vite.config.ts:
 * dist/vendor/kysely.js, every export of `kysely` and `kysely/migration`), and the gateway's process resolves both
 * to it: the same code, about 1 MiB less heap. Both specifiers resolve there, so there is one copy of its classes;
 * kysely's other entry points (`kysely/helpers/*`) are not in the bundle and would load the package beside it (the
 * gateway imports none).
 *
 * Where the bundle was not built (a tree compiled by tsc alone) or this Node has no synchronous module hooks
 * (module.registerHooks: Node 22.15 / 23.5 and newer), kysely loads from its package as usual.
 */
import { existsSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

/** The specifiers the bundle answers for: kysely's entry and its migration API. */
const BUNDLED_SPECIFIERS: ReadonlySet<string> = new Set(['kysely', 'kysely/migration']);
const BUNDLE = new URL('../../vendor/kysely.js', import.meta.url);

let installed = false;

/** True when `specifier` is one the bundle answers for. */
export function isBundledKyselySpecifier(specifier: string): boolean {
  return BUNDLED_SPECIFIERS.has(specifier);
}

/** Resolves kysely to its bundle from here on (once); false where the bundle is missing or Node cannot. */
export function loadKyselyFromBundle(bundle: URL = BUNDLE): boolean {
  if (installed) return true;
  const register = (nodeModule as { registerHooks?: typeof nodeModule.registerHooks }).registerHooks;
  if (typeof register !== 'function' || !existsSync(fileURLToPath(bundle))) return false;
  const url = bundle.href;
  register({
    resolve(specifier, context, nextResolve) {
      if (isBundledKyselySpecifier(specifier)) return { url, format: 'module', shortCircuit: true };
      return nextResolve(specifier, context);
    },
  });
  installed = true;
  return true;
}
