import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/storage.js';
import { channelFromInput, channelPatchFromInput, createChannelSchema } from './channel-input.js';
import { checkFallbacks, type KnownModel } from './check-fallbacks.js';
import { createModelSchema, modelFromInput, modelPatchFromInput } from './model-input.js';
import { parseInput } from './parse-input.js';
import { createPlanSchema, planFromInput, planPatchFromInput } from './plan-input.js';
import { createTierSchema, tierFromInput, tierStateFromInput } from './tier-input.js';

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

const fileSchema = z.object({
  channels: z.array(z.unknown()).default([]),
  models: z.array(z.unknown()).default([]),
  plans: z.array(z.unknown()).default([]),
  tiers: z.array(z.unknown()).default([]),
}).strict();

/** Replaces `${NAME}` in every string value (not in the YAML text, so a secret cannot change the structure). */
export function expandEnvironment(value: unknown, env: Record<string, string | undefined>, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
      const resolved = env[name];
      if (resolved === undefined) throw new ConfigFileError(`${path || 'value'} refers to \${${name}}, which is not set`);
      return resolved;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expandEnvironment(item, env, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandEnvironment(item, env, path === '' ? key : `${path}.${key}`)]));
  }
  return value;
}

export interface AppliedConfig {
  channels: number;
  models: number;
  plans: number;
  tiers: number;
}

function withContext<T>(where: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new ConfigFileError(`${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Applies gateway.yaml: channels by name, models by id, plans by name and tiers by name are created or updated to
 * match the file, so applying the same file twice leaves the same state. Entities not in the file are left alone.
 */
export async function applyConfigFile(file: string, storage: Storage, clock: Clock, env: Record<string, string | undefined>): Promise<AppliedConfig> {
  let raw: unknown;
  try {
    // The YAML parser is loaded only when a config file is applied (most starts have none).
    const { parse: parseYaml } = await import('yaml');
    raw = parseYaml(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ConfigFileError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const document = withContext(file, () => parseInput(fileSchema, expandEnvironment(raw ?? {}, env)));
  const now = clock.now();

  const modelInputs = document.models.map((entry, index) => withContext(`models[${index}]`, () => parseInput(createModelSchema, entry)));
  // A fallback names a model of the file or one already stored.
  const fileModels = new Map(modelInputs.map((input) => [input.id, { id: input.id, kind: input.kind ?? 'chat' }]));
  const storedModels = new Map((await storage.models.listAll()).map((model) => [model.id, model]));
  for (const [index, input] of modelInputs.entries()) {
    withContext(`models[${index}]`, () => checkFallbacks(fileModels.get(input.id) as KnownModel, input.fallbacks ?? [], (name) => fileModels.get(name) ?? storedModels.get(name)));
  }
  for (const input of modelInputs) {
    const existing = await storage.models.getById(input.id);
    if (existing === null) await storage.models.create(modelFromInput(input, now));
    else await storage.models.update(input.id, modelPatchFromInput(input, null), now);
  }
  for (const [index, entry] of document.channels.entries()) {
    const input = withContext(`channels[${index}]`, () => parseInput(createChannelSchema, entry));
    const existing = await storage.channels.getByName(input.name);
    if (existing === null) await storage.channels.create(withContext(`channels[${index}]`, () => channelFromInput(input, now)));
    else await storage.channels.update(existing.id, withContext(`channels[${index}]`, () => channelPatchFromInput(existing, input)), now);
  }
  for (const [index, entry] of document.plans.entries()) {
    const input = withContext(`plans[${index}]`, () => parseInput(createPlanSchema, entry));
    const existing = await storage.plans.getByName(input.name);
    if (existing === null) await storage.plans.create(planFromInput(input, now));
    else await storage.plans.update(existing.id, planPatchFromInput(input), now);
  }
  for (const [index, entry] of document.tiers.entries()) {
    const input = withContext(`tiers[${index}]`, () => parseInput(createTierSchema, entry));
    const existing = await storage.tiers.getByName(input.name);
    if (existing === null) await storage.tiers.create(tierFromInput(input, now));
    else {
      const declared = tierStateFromInput(input);
      const same = existing.rpm === declared.rpm && existing.tpm === declared.tpm && existing.signupCreditNano === declared.signupCreditNano && existing.signupCreditDays === declared.signupCreditDays;
      if (!same) await storage.tiers.update(input.name, declared, now);
    }
  }
  return { channels: document.channels.length, models: document.models.length, plans: document.plans.length, tiers: document.tiers.length };
}
