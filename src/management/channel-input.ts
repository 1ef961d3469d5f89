import { z } from 'zod';
import { newId } from '../shared/ids.js';
import type { Channel, ChannelType } from '../domain/records.js';
import type { ChannelPatch } from '../storage/storage.js';
import { CHANNEL_TYPES } from '../upstreams/upstreams.js';
import { checkChannel, takesStructuredKeys } from './channel-type-rules.js';
import { isoTime } from './time-input.js';
import type { ChannelJson } from '../contract/channels.js';
import { hasUrlCredentials, withoutUrlCredentials } from '../shared/url-credentials.js';

/** The refusal of `https://user:password@host` as a channel's base URL (admin API, console, gateway.yaml). */
export const CREDENTIALS_IN_BASE_URL = 'must not carry a user name or password (https://user:password@host): give the upstream credential as \'api_key\', or another header in \'headers\'.';


const modelsInput = z.union([
  z.array(z.string().min(1)).transform((ids) => Object.fromEntries(ids.map((id) => [id, '']))),
  z.record(z.string().min(1), z.string()),
]);

const channelFields = {
  name: z.string().min(1).max(100),
  type: z.enum(CHANNEL_TYPES as readonly [ChannelType, ...ChannelType[]]),
  // Credentials go in `api_key` (or a header); a URL's user and password would be kept and shown in clear.
  base_url: z.url({ protocol: /^https?$/ })
    .refine((url) => !hasUrlCredentials(url), CREDENTIALS_IN_BASE_URL)
    .nullable().optional(),
  api_key: z.string().min(1).optional(),
  /** Several upstream keys, used in rotation. */
  api_keys: z.array(z.string().min(1)).min(1).optional(),
  /** Structured credentials (bedrock: `{access_key_id, secret_access_key, session_token?}`; vertex-ai: the service-account key), one or several. */
  credentials: z.union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown())).min(1)]).optional(),
  models: modelsInput,
  priority: z.number().int().min(-1000).max(1000).optional(),
  weight: z.number().int().min(0).max(1_000_000).optional(),
  enabled: z.boolean().optional(),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/), z.string()).optional(),
  settings: z.record(z.string(), z.unknown()).optional(),
};

export const createChannelSchema = z.object(channelFields).strict();
const headerName = z.string().regex(/^[A-Za-z0-9-]+$/);
/**
 * A change takes only what it names: `header_changes` sets (a string) or removes (null) single headers and keeps the
 * others, whose values the admin API never shows and so cannot be sent back.
 */
export const updateChannelSchema = z.object({ ...channelFields, header_changes: z.record(headerName, z.string().nullable()).optional() }).partial().strict();

export type CreateChannelInput = z.infer<typeof createChannelSchema>;
export type UpdateChannelInput = z.infer<typeof updateChannelSchema>;

type KeyInput = { api_key?: string | undefined; api_keys?: string[] | undefined; credentials?: Record<string, unknown> | Array<Record<string, unknown>> | undefined };

/**
 * The channel's keys: `credentials` (JSON objects, stored as JSON text), `api_keys`, or `api_key` — split on commas
 * and newlines into several keys, except for types whose key is one JSON document.
 */
function keysOf(input: KeyInput, type: ChannelType): string[] | undefined {
  if (input.credentials !== undefined) return (Array.isArray(input.credentials) ? input.credentials : [input.credentials]).map((entry) => JSON.stringify(entry));
  if (input.api_keys !== undefined) return input.api_keys;
  if (input.api_key !== undefined) {
    if (takesStructuredKeys(type)) return [input.api_key.trim()].filter(Boolean);
    return input.api_key.split(/[\n,]/).map((key) => key.trim()).filter(Boolean);
  }
  return undefined;
}

export function channelFromInput(input: CreateChannelInput, now: number): Channel {
  const apiKeys = keysOf(input, input.type) ?? [];
  const baseUrl = input.base_url ?? null;
  checkChannel(input.type, baseUrl, apiKeys, input.settings ?? {});
  return {
    id: newId('ch', now),
    name: input.name,
    type: input.type,
    baseUrl,
    apiKeys,
    models: input.models,
    priority: input.priority ?? 0,
    weight: input.weight ?? 1,
    enabled: input.enabled ?? true,
    headers: input.headers ?? {},
    settings: input.settings ?? {},
    createdAt: now,
    updatedAt: now,
  };
}

export function channelPatchFromInput(existing: Channel, input: UpdateChannelInput): ChannelPatch {
  const patch: ChannelPatch = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.type !== undefined) patch.type = input.type;
  if (input.base_url !== undefined) patch.baseUrl = input.base_url;
  const apiKeys = keysOf(input, input.type ?? existing.type);
  if (apiKeys !== undefined) patch.apiKeys = apiKeys;
  if (input.models !== undefined) patch.models = input.models;
  if (input.priority !== undefined) patch.priority = input.priority;
  if (input.weight !== undefined) patch.weight = input.weight;
  if (input.enabled !== undefined) patch.enabled = input.enabled;
  if (input.headers !== undefined) patch.headers = input.headers;
  if (input.header_changes !== undefined) {
    const headers = { ...(patch.headers ?? existing.headers) };
    for (const [name, value] of Object.entries(input.header_changes)) {
      // Header names are case-insensitive: a change replaces the stored header whatever its case.
      for (const stored of Object.keys(headers)) if (stored.toLowerCase() === name.toLowerCase()) delete headers[stored];
      if (value !== null) headers[name] = value;
    }
    patch.headers = headers;
  }
  if (input.settings !== undefined) patch.settings = input.settings;
  checkChannel(patch.type ?? existing.type, patch.baseUrl === undefined ? existing.baseUrl : patch.baseUrl, patch.apiKeys ?? existing.apiKeys, patch.settings ?? existing.settings);
  return patch;
}

function maskSecret(secret: string): string {
  return secret.length <= 8 ? '…' : `…${secret.slice(-4)}`;
}

/** Admin view of a channel: upstream keys and header values are never returned whole. */
export function channelToJson(channel: Channel): ChannelJson {
  return {
    id: channel.id,
    object: 'channel',
    name: channel.name,
    type: channel.type,
    // Refused on input and removed from stored rows; one an older instance wrote still never shows them.
    base_url: channel.baseUrl === null ? null : withoutUrlCredentials(channel.baseUrl),
    api_key_hints: channel.apiKeys.map(maskSecret),
    models: channel.models,
    priority: channel.priority,
    weight: channel.weight,
    enabled: channel.enabled,
    headers: Object.fromEntries(Object.entries(channel.headers).map(([name, value]) => [name, maskSecret(value)])),
    settings: channel.settings,
    created_at: isoTime(channel.createdAt),
    updated_at: isoTime(channel.updatedAt),
  };
}
