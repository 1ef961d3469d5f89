import { z } from 'zod';
import { MoneyFormatError, usdToNano } from '../billing/money.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ProviderPreference } from './provider-preference.js';

/** Longest list a preference may name, and the longest name in it. */
const MAX_ENTRIES = 64;
const MAX_NAME_LENGTH = 200;

const names = z.array(z.string().trim().min(1).max(MAX_NAME_LENGTH)).max(MAX_ENTRIES);

/** USD per million tokens, as a JSON number or decimal string, exactly to nano-USD. */
const pricePerMtok = z.union([z.number(), z.string()]).transform((value, context) => {
  try {
    const nano = usdToNano(value);
    if (nano >= 0n) return nano;
    context.addIssue({ code: 'custom', message: 'must not be negative' });
  } catch (error) {
    context.addIssue({ code: 'custom', message: error instanceof MoneyFormatError ? error.message : 'must be a USD amount' });
  }
  return z.NEVER;
});

/** OpenRouter's `provider` object, the fields the gateway honours; any other field is refused rather than ignored. */
const preferenceSchema = z.object({
  order: names.optional(),
  allow_fallbacks: z.boolean().optional(),
  only: names.optional(),
  ignore: names.optional(),
  sort: z.enum(['price', 'latency']).optional(),
  max_price: z.object({ prompt: pricePerMtok.optional(), completion: pricePerMtok.optional() }).strict().optional(),
}).strict();

/**
 * The caller's provider preference from its wire form (`null` and absent: none). A malformed object is a 400 in
 * the caller's error shape naming the field (`provider.sort`, or the header's name when it came in a header).
 */
export function parseProviderPreference(raw: unknown, source: string): ProviderPreference | null {
  if (raw === undefined || raw === null) return null;
  const result = preferenceSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue === undefined ? [] : issue.path.map(String);
    const param = [source, ...path].join('.');
    throw new GatewayError('bad_request', `'${param}': ${issue?.message ?? 'invalid provider preference'}. The provider preference takes order, allow_fallbacks, only, ignore, sort ('price' or 'latency') and max_price { prompt, completion } in USD per million tokens.`, { param });
  }
  const input = result.data;
  const preference: ProviderPreference = {};
  if (input.order !== undefined) preference.order = input.order;
  if (input.allow_fallbacks !== undefined) preference.allowFallbacks = input.allow_fallbacks;
  if (input.only !== undefined) preference.only = input.only;
  if (input.ignore !== undefined) preference.ignore = input.ignore;
  if (input.sort !== undefined) preference.sort = input.sort;
  if (input.max_price !== undefined) {
    preference.maxPrice = {};
    if (input.max_price.prompt !== undefined) preference.maxPrice.promptPerMtokNano = input.max_price.prompt;
    if (input.max_price.completion !== undefined) preference.maxPrice.completionPerMtokNano = input.max_price.completion;
  }
  return preference;
}

/** The preference from a header holding the same JSON object. */
export function parseProviderPreferenceHeader(value: string, header: string): ProviderPreference | null {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    throw new GatewayError('bad_request', `'${header}' must hold a JSON object (the provider preference).`, { param: header });
  }
  return parseProviderPreference(raw, header);
}
