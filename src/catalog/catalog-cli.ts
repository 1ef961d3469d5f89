import { parseArgs } from 'node:util';
import { nanoToUsd } from '../billing/money.js';
import { ConfigError } from '../config/load-config.js';
import { Catalog } from '../routing/catalog.js';
import type { Logger } from '../shared/logger.js';
import type { Model, Pricing } from '../domain/model-records.js';
import type { NanoUsd } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';
import { BundledCatalog, type BundledModel } from './bundled-catalog.js';
import { overlayOperatorModel, type CatalogModel } from './catalog-model.js';
import { BUILT_IN_PROVIDERS, channelCatalog } from './channel-catalog.js';
import { catalogFactsToJson, PRICE_FIELDS, pricingToJson } from './model-json.js';

export const MODELS_USAGE = `  models list [--all] [--provider <id>] [--kind <kind>] [--json]
                                          the models the gateway serves (--all: every bundled model)
  models search <text> [--json]           bundled and served models whose id or alias contains the text
  models show <id> [--json]               one model: prices (with long-context tiers), limits, capabilities,
                                          aliases, where its prices come from and the channels serving it
  models diff [--json]                    the operator's model records against the bundled catalog
`;

type Write = (text: string) => void;

interface CatalogView {
  bundled: BundledCatalog;
  served: Catalog;
  providers: string[];
  stored: Model[];
}

async function openView(storage: Storage, logger: Logger, now: number): Promise<CatalogView> {
  const bundled = new BundledCatalog(now);
  const served = new Catalog(storage, logger, () => true, bundled);
  await served.reload();
  const named = served.channels().map((channel) => channelCatalog(channel)?.provider).filter((provider): provider is string => provider !== undefined);
  return { bundled, served, providers: [...new Set([...BUILT_IN_PROVIDERS, ...named])], stored: await storage.models.listAll() };
}

function allBundled(view: CatalogView): BundledModel[] {
  return view.providers.flatMap((provider) => view.bundled.provider(provider));
}

const usd = (nano: NanoUsd | null): string => (nano === null ? '-' : `$${nanoToUsd(nano)}`);
const tokens = (count: number | null): string => (count === null ? '-' : count >= 1000 ? `${Math.round(count / 1000)}k` : String(count));

function capabilityFlags(model: CatalogModel): string {
  const { capabilities } = model;
  if (capabilities === null) return '-';
  return [capabilities.tools ? 'tools' : '', capabilities.vision ? 'vision' : '', capabilities.jsonSchema ? 'json' : '', capabilities.reasoning ? 'reasoning' : ''].filter((flag) => flag !== '').join(',') || '-';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_cell, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return `${rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd()).join('\n')}\n`;
}

/** The cheapest and dearest image of a table by size and quality. */
function imagePriceRange(table: Readonly<Record<string, NanoUsd>>): string {
  const prices = Object.values(table).sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
  const low = prices[0] ?? null;
  const high = prices.at(-1) ?? null;
  return low === high ? usd(low) : `${usd(low)}-${usd(high)}`;
}

function listTable(models: readonly CatalogModel[]): string {
  const header = ['id', 'kind', 'provider', 'context', 'output', 'capabilities', 'input/M', 'output/M', 'cache read/M', 'cache write/M', 'other', 'prices'];
  const rows = models.map((model) => {
    const { pricing } = model;
    const other = [pricing.perAudioMinuteNano === null ? '' : `${usd(pricing.perAudioMinuteNano)}/min`, pricing.perImageNano === null ? '' : `${usd(pricing.perImageNano)}/image`,
      pricing.perImageBySize === undefined ? '' : `${imagePriceRange(pricing.perImageBySize)}/image`, pricing.perMcharNano === null ? '' : `${usd(pricing.perMcharNano)}/Mchar`,
      pricing.perRequestNano === null ? '' : `${usd(pricing.perRequestNano)}/request`, pricing.perWebSearchNano === null ? '' : `${usd(pricing.perWebSearchNano)}/search`,
      pricing.perGroundedPromptNano === null ? '' : `${usd(pricing.perGroundedPromptNano)}/grounded`,
      pricing.tiers === undefined ? '' : `tiers>${pricing.tiers.map((tier) => tokens(tier.aboveInputTokens)).join(',')}`].filter((part) => part !== '').join(' ');
    return [model.id, model.kind, model.provider ?? model.ownedBy, tokens(model.contextWindow), tokens(model.maxOutputTokens), capabilityFlags(model),
      usd(pricing.inputPerMtokNano), usd(pricing.outputPerMtokNano), usd(pricing.cachedInputPerMtokNano), usd(pricing.cacheWritePerMtokNano), other || '-', model.priceSource];
  });
  return table([header, ...rows]);
}

function modelJson(model: CatalogModel): Record<string, unknown> {
  return { id: model.id, kind: model.kind, owned_by: model.ownedBy, ...catalogFactsToJson(model), pricing: pricingToJson(model.pricing) };
}

function output(models: readonly CatalogModel[], json: boolean, write: Write): void {
  write(json ? `${JSON.stringify(models.map(modelJson), null, 2)}\n` : listTable(models));
}

function list(view: CatalogView, args: string[], write: Write): void {
  const { values } = parseArgs({ args, options: { all: { type: 'boolean' }, provider: { type: 'string' }, kind: { type: 'string' }, json: { type: 'boolean' } } });
  const models = values.all === true ? allBundled(view).map((bundled) => view.served.model(bundled.model.id) ?? bundled.model) : view.served.models().filter((model) => view.served.hasRoute(model.id));
  const chosen = models
    .filter((model) => values.provider === undefined || (model.provider ?? model.ownedBy) === values.provider)
    .filter((model) => values.kind === undefined || model.kind === values.kind)
    .sort((left, right) => left.id.localeCompare(right.id));
  output(chosen, values.json === true, write);
}

function search(view: CatalogView, args: string[], write: Write): void {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const text = positionals.join(' ').toLowerCase();
  if (text === '') throw new ConfigError('models search needs the text to look for');
  const found = new Map<string, CatalogModel>();
  for (const model of [...view.served.models(), ...allBundled(view).map((bundled) => bundled.model)]) {
    if (found.has(model.id)) continue;
    if (model.id.toLowerCase().includes(text) || model.aliases.some((alias) => alias.toLowerCase().includes(text))) found.set(model.id, view.served.model(model.id) ?? model);
  }
  output([...found.values()].sort((left, right) => left.id.localeCompare(right.id)), values.json === true, write);
}

function priceLines(pricing: Pricing): string[] {
  const lines = [
    `  input           ${usd(pricing.inputPerMtokNano)} per million tokens`,
    `  output          ${usd(pricing.outputPerMtokNano)} per million tokens`,
    `  cache read      ${usd(pricing.cachedInputPerMtokNano)} per million tokens`,
    `  cache write     ${usd(pricing.cacheWritePerMtokNano)} per million tokens`,
  ];
  if (pricing.perRequestNano !== null) lines.push(`  per request     ${usd(pricing.perRequestNano)}`);
  if (pricing.perImageNano !== null) lines.push(`  per image       ${usd(pricing.perImageNano)}`);
  if (pricing.perAudioMinuteNano !== null) lines.push(`  per audio min.  ${usd(pricing.perAudioMinuteNano)}`);
  if (pricing.perMcharNano !== null) lines.push(`  per M chars     ${usd(pricing.perMcharNano)}`);
  for (const [variant, price] of Object.entries(pricing.perImageBySize ?? {})) lines.push(`  per image       ${usd(price)} (${variant})`);
  if (pricing.perWebSearchNano !== null) lines.push(`  per web search  ${usd(pricing.perWebSearchNano)}`);
  if (pricing.perGroundedPromptNano !== null) lines.push(`  per grounded prompt ${usd(pricing.perGroundedPromptNano)} (once for a request that searched)`);
  if (pricing.perWebFetchNano !== null) lines.push(`  per web fetch   ${usd(pricing.perWebFetchNano)}`);
  if (pricing.perFileSearchNano !== null) lines.push(`  per file search ${usd(pricing.perFileSearchNano)}`);
  if (pricing.batchInputPerMtokNano !== null) lines.push(`  batch input     ${usd(pricing.batchInputPerMtokNano)} per million tokens`);
  if (pricing.batchOutputPerMtokNano !== null) lines.push(`  batch output    ${usd(pricing.batchOutputPerMtokNano)} per million tokens`);
  for (const tier of pricing.tiers ?? []) {
    lines.push(`  above ${tier.aboveInputTokens} input tokens: input ${usd(tier.inputPerMtokNano)}, output ${usd(tier.outputPerMtokNano)}, cache read ${usd(tier.cachedInputPerMtokNano)}, cache write ${usd(tier.cacheWritePerMtokNano)}`);
  }
  return lines;
}

function show(view: CatalogView, args: string[], write: Write): void {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const id = positionals[0];
  if (id === undefined) throw new ConfigError('models show needs a model id');
  const model = view.served.model(id) ?? allBundled(view).find((bundled) => bundled.model.id === id || bundled.model.aliases.includes(id))?.model;
  if (model === undefined) throw new ConfigError(`no model '${id}' in the bundled catalog or the operator's records`);
  const channels = view.served.routes(id).map((route) => ({ channel: route.channel.name, upstream_model: route.upstreamModel }));
  if (values.json === true) {
    write(`${JSON.stringify({ ...modelJson(model), channels }, null, 2)}\n`);
    return;
  }
  const lines = [
    `${model.id}${model.id === id ? '' : ` (asked as ${id})`}`,
    `  kind            ${model.kind}`,
    `  provider        ${model.provider ?? model.ownedBy}`,
    `  context window  ${model.contextWindow ?? 'unknown'}`,
    `  max output      ${model.maxOutputTokens ?? 'unknown'}`,
    `  capabilities    ${capabilityFlags(model)}`,
    `  modalities      ${model.modalities === null ? 'unknown' : `${model.modalities.input.join('+')} -> ${model.modalities.output.join('+')}`}`,
    `  aliases         ${model.aliases.join(', ') || '-'}`,
    `  prices from     ${model.priceSource === 'bundled' ? `bundled data (@pydantic/genai-prices ${view.bundled.version})` : 'the operator (admin API / gateway.yaml)'}`,
    ...priceLines(model.pricing),
    `  channels        ${channels.map((route) => `${route.channel} (${route.upstream_model})`).join(', ') || 'none'}`,
  ];
  write(`${lines.join('\n')}\n`);
}

interface DiffEntry {
  id: string;
  status: 'overrides' | 'same' | 'operator-only';
  changes: Array<{ field: string; bundled: number | null; operator: number | null }>;
}

function diff(view: CatalogView, args: string[], write: Write): void {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' } } });
  const bundledList = allBundled(view);
  const entries: DiffEntry[] = [...view.stored].sort((left, right) => left.id.localeCompare(right.id)).map((record) => {
    const bundled = bundledList.find((entry) => entry.model.id === record.id);
    if (bundled === undefined) return { id: record.id, status: 'operator-only', changes: [] };
    // What the record makes of the bundled prices (hosted tool prices it leaves unset stay the bundled ones).
    const served = overlayOperatorModel(bundled.model, record).pricing;
    // An optional price left out (the audio ones) is unset, as null is.
    const price = (pricing: Pricing, key: (typeof PRICE_FIELDS)[number][1]): NanoUsd | null => pricing[key] ?? null;
    const changes = PRICE_FIELDS.filter(([, key]) => price(served, key) !== price(bundled.model.pricing, key)).map(([field, key]) => {
      const [bundledPrice, servedPrice] = [price(bundled.model.pricing, key), price(served, key)];
      return { field, bundled: bundledPrice === null ? null : nanoToUsd(bundledPrice), operator: servedPrice === null ? null : nanoToUsd(servedPrice) };
    });
    return { id: record.id, status: changes.length === 0 && (bundled.model.pricing.tiers ?? []).length === 0 ? 'same' : 'overrides', changes };
  });
  if (values.json === true) {
    write(`${JSON.stringify({ bundled_version: view.bundled.version, models: entries }, null, 2)}\n`);
    return;
  }
  const lines = [`bundled catalog: @pydantic/genai-prices ${view.bundled.version}; ${entries.length} operator model record(s)`];
  for (const entry of entries) {
    if (entry.status === 'operator-only') lines.push(`  ${entry.id}: operator only (not in the bundled data)`);
    else if (entry.changes.length === 0) lines.push(`  ${entry.id}: same prices as bundled${entry.status === 'overrides' ? ' (without its long-context tiers)' : ''}`);
    else lines.push(`  ${entry.id}: overrides ${entry.changes.map((change) => `${change.field} ${change.bundled ?? '-'} -> ${change.operator ?? '-'}`).join(', ')}`);
  }
  write(`${lines.join('\n')}\n`);
}

/** `unigate models …`: read-only views of the catalog the gateway serves, from the database and the bundled data. */
export async function modelsCommand(storage: Storage, logger: Logger, now: number, args: string[], write: Write): Promise<void> {
  const [sub, ...rest] = args;
  const view = await openView(storage, logger, now);
  switch (sub) {
    case 'list':
      return list(view, rest, write);
    case 'search':
      return search(view, rest, write);
    case 'show':
      return show(view, rest, write);
    case 'diff':
      return diff(view, rest, write);
    default:
      throw new ConfigError(`unknown models command "${sub ?? ''}"`);
  }
}
