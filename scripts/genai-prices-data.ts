import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { findProvider, type ModelInfo, type Provider } from '@pydantic/genai-prices';
import type { BundledPriceData, BundledPriceModel } from '../src/catalog/bundled-price-data.js';

const PACKAGE = '@pydantic/genai-prices';

/** The installed package's version, from its package.json. */
function packageVersion(): string {
  const entry = createRequire(import.meta.url).resolve(PACKAGE);
  const manifest = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof manifest.version !== 'string') throw new Error(`${PACKAGE}: no version in its package.json`);
  return manifest.version;
}

/**
 * The ids of every provider the package carries. The package exports no list, so its CommonJS build is evaluated
 * in a fresh context and its data array (the first `const X=[{id:` of the file) read out; every id found is then
 * checked against the package's own lookup, so a build laid out otherwise fails here rather than losing providers.
 */
function providerIds(): string[] {
  const source = readFileSync(createRequire(import.meta.url).resolve(PACKAGE), 'utf8');
  const name = /const (\w+)=\[\{id:/.exec(source)?.[1];
  if (name === undefined) throw new Error(`${PACKAGE}: its provider data array was not found; read the package's build and adjust scripts/genai-prices-data.ts`);
  const providers = runInNewContext(`(function (exports) { ${source}\n; return ${name}; })({})`) as Array<{ id?: unknown }>;
  const ids = providers.map((provider) => provider.id).filter((id): id is string => typeof id === 'string');
  if (ids.length === 0) throw new Error(`${PACKAGE}: no providers in its data array`);
  return ids;
}

/** What the catalog reads of a model: its id, the rule for the ids it answers to, its context window and prices. */
function compactModel(info: ModelInfo): BundledPriceModel {
  return { id: info.id, match: info.match, ...(info.context_window === undefined ? {} : { context_window: info.context_window }), prices: info.prices };
}

/** The catalog's part of the installed package's data: each provider's models, in the package's order. */
export function extractGenaiPrices(): BundledPriceData {
  const providers: Record<string, BundledPriceModel[]> = {};
  for (const id of providerIds()) {
    const provider: Provider | undefined = findProvider({ providerId: id });
    if (provider?.id !== id) throw new Error(`${PACKAGE}: findProvider does not return provider ${id}`);
    providers[id] = provider.models.map(compactModel);
  }
  return { package: PACKAGE, version: packageVersion(), providers };
}

/** The file's text: one provider per line, so a data upgrade reads as a diff per provider. */
export function formatGenaiPrices(data: BundledPriceData): string {
  const lines = Object.entries(data.providers).map(([id, models]) => `    ${JSON.stringify(id)}: ${JSON.stringify(models)}`);
  return `{\n  "package": ${JSON.stringify(data.package)},\n  "version": ${JSON.stringify(data.version)},\n  "providers": {\n${lines.join(',\n')}\n  }\n}\n`;
}
