import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';

/** The end customer a request names and its tags, as the usage row keeps them. Never prompt text. */
export interface RequestIdentity {
  customer: string | null;
  tags: Readonly<Record<string, string>> | null;
}

export const NO_IDENTITY: RequestIdentity = { customer: null, tags: null };

/** Header naming the end customer on any family (it wins over the body's field). */
export const CUSTOMER_HEADER = 'x-gateway-customer';
/** Header with the request's tags: `name=value` pairs separated by commas. */
export const TAGS_HEADER = 'x-gateway-tags';

/** Longest end-customer id kept (OpenAI's `safety_identifier` allows 64; `user` and Anthropic's `user_id` more). */
export const CUSTOMER_MAX_LENGTH = 256;
/** Most tags a request carries (OpenAI's `metadata` allows 16 pairs). */
export const TAGS_MAX_COUNT = 16;
export const TAG_NAME_MAX_LENGTH = 64;
/** Longest tag value kept (OpenAI's `metadata` values go up to 512 characters). */
export const TAG_VALUE_MAX_LENGTH = 512;

/** Printable characters without control codes (the usage log, CSV export and Redis keys take any of these). */
const CONTROL = /[\u0000-\u001f\u007f]/;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

/** An end-customer id from `param`: trimmed, bounded, no control characters; an empty one names no customer. */
export function customerFrom(raw: unknown, param: string): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') throw invalid(param, `'${param}' must be a string.`);
  const customer = raw.trim();
  if (customer === '') return null;
  if (customer.length > CUSTOMER_MAX_LENGTH) throw invalid(param, `'${param}' names an end customer of more than ${CUSTOMER_MAX_LENGTH} characters, the most the gateway keeps.`);
  if (CONTROL.test(customer)) throw invalid(param, `'${param}' must not contain control characters.`);
  return customer;
}

function addTag(tags: Record<string, string>, name: string, value: string, param: string): void {
  if (name === '' || name.length > TAG_NAME_MAX_LENGTH || !/^[A-Za-z0-9_.:-]+$/.test(name)) {
    throw invalid(param, `Tag name '${name.slice(0, TAG_NAME_MAX_LENGTH)}' in '${param}' must be 1 to ${TAG_NAME_MAX_LENGTH} letters, digits, '_', '.', ':' or '-'.`);
  }
  if (value.length > TAG_VALUE_MAX_LENGTH || CONTROL.test(value) || value.includes('=')) {
    throw invalid(param, `The value of tag '${name}' in '${param}' must be at most ${TAG_VALUE_MAX_LENGTH} characters, without '=' or control characters.`);
  }
  if (!(name in tags) && Object.keys(tags).length >= TAGS_MAX_COUNT) throw invalid(param, `A request carries at most ${TAGS_MAX_COUNT} tags.`);
  tags[name] = value;
}

/** `team=search,feature=summaries` (a name without `=` is a tag with an empty value). */
function headerTags(raw: string, tags: Record<string, string>): void {
  for (const pair of raw.split(',')) {
    const text = pair.trim();
    if (text === '') continue;
    const separator = text.indexOf('=');
    addTag(tags, separator < 0 ? text : text.slice(0, separator).trim(), separator < 0 ? '' : text.slice(separator + 1).trim(), TAGS_HEADER);
  }
}

/** An object of string values (OpenAI's `metadata`, Gemini's `labels`); anything else is left to the codec to refuse. */
function objectTags(raw: unknown, param: string, tags: Record<string, string>, skip: string | null = null): void {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return;
  for (const [name, value] of Object.entries(raw)) {
    if (name === skip || typeof value !== 'string') continue;
    if (!(name in tags)) addTag(tags, name, value, `${param}.${name}`);
  }
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * The end customer and tags a request names, from fields the request's protocol already has and the gateway's
 * headers: OpenAI's `user` (or `safety_identifier`) and `metadata`; Anthropic's `metadata.user_id`; Gemini's `labels`
 * (its `customer` label names the customer, every label is a tag); `x-gateway-customer` and `x-gateway-tags` on any
 * family (the header's customer and tags win). Reads fields of the body already parsed (no second parse). Throws the
 * spec's 400 for an over-long or malformed value: a bound silently cut would merge two customers' budgets.
 */
export function readRequestIdentity(protocol: string, headers: IncomingHttpHeaders, body: Record<string, unknown> | null): RequestIdentity {
  // Most requests name nobody: no gateway header, and none of the body's fields the protocol names one with
  // (present, whatever its value, takes the full reading).
  if (headers[CUSTOMER_HEADER] === undefined && headers[TAGS_HEADER] === undefined) {
    if (body === null) return NO_IDENTITY;
    switch (protocol) {
      case 'openai-chat':
      case 'openai-responses':
      case 'openai-embeddings':
        if (body.user === undefined && body.safety_identifier === undefined && body.metadata === undefined) return NO_IDENTITY;
        break;
      case 'anthropic-messages':
        if (body.metadata === undefined) return NO_IDENTITY;
        break;
      case 'gemini':
        if (body.labels === undefined) return NO_IDENTITY;
        break;
      default:
        return NO_IDENTITY;
    }
  }
  return readRequestIdentityInFull(protocol, headers, body);
}

/** `readRequestIdentity` without its shortcut for a request that names nobody (which must answer as this does). */
export function readRequestIdentityInFull(protocol: string, headers: IncomingHttpHeaders, body: Record<string, unknown> | null): RequestIdentity {
  let customer = customerFrom(headerOf(headers, CUSTOMER_HEADER), CUSTOMER_HEADER);
  const tags: Record<string, string> = {};
  const tagHeader = headerOf(headers, TAGS_HEADER);
  if (tagHeader !== undefined) headerTags(tagHeader, tags);
  if (body !== null) {
    switch (protocol) {
      case 'openai-chat':
      case 'openai-responses':
      case 'openai-embeddings':
        customer ??= customerFrom(typeof body.user === 'string' ? body.user : body.safety_identifier, typeof body.user === 'string' ? 'user' : 'safety_identifier');
        objectTags(body.metadata, 'metadata', tags);
        break;
      case 'anthropic-messages': {
        const metadata = body.metadata;
        if (metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata)) customer ??= customerFrom((metadata as Record<string, unknown>).user_id, 'metadata.user_id');
        break;
      }
      case 'gemini': {
        const labels = body.labels;
        if (labels !== null && typeof labels === 'object' && !Array.isArray(labels)) {
          customer ??= customerFrom((labels as Record<string, unknown>).customer, 'labels.customer');
          objectTags(labels, 'labels', tags, 'customer');
        }
        break;
      }
      default:
        break;
    }
  }
  const tagged = Object.keys(tags).length > 0;
  return customer === null && !tagged ? NO_IDENTITY : { customer, tags: tagged ? tags : null };
}

/**
 * Puts the end customer the caller named only in `x-gateway-customer` into the body's own field where the family has
 * one, so the upstream (pass-through or translated) sees it as if the caller had sent it: OpenAI's `user`, Anthropic's
 * `metadata.user_id`. A body that names a customer itself keeps its own; a request that names none gains nothing;
 * Gemini has no such field upstream. Says whether the body was changed, and which top-level fields it added: answers
 * must not echo those, as an answer shows what the caller sent, not what the gateway added.
 */
export function forwardHeaderCustomer(protocol: string, headers: IncomingHttpHeaders, body: Record<string, unknown>, identity: RequestIdentity): CustomerForwarding {
  if (identity.customer === null || customerFrom(headerOf(headers, CUSTOMER_HEADER), CUSTOMER_HEADER) === null) return UNCHANGED;
  switch (protocol) {
    case 'openai-chat':
    case 'openai-responses':
    case 'openai-embeddings':
      if (body.user != null || body.safety_identifier != null) return UNCHANGED;
      body.user = identity.customer;
      return { changed: true, added: USER_FIELD };
    case 'anthropic-messages': {
      const metadata = body.metadata;
      if (metadata == null) {
        body.metadata = { user_id: identity.customer };
        return { changed: true, added: METADATA_FIELD };
      }
      if (typeof metadata !== 'object' || Array.isArray(metadata) || (metadata as Record<string, unknown>).user_id != null) return UNCHANGED;
      body.metadata = { ...metadata, user_id: identity.customer };
      return { changed: true, added: NO_FIELDS };
    }
    default:
      return UNCHANGED;
  }
}

/** What putting the header's customer into the body did: whether it changed the body, and the top-level fields it added. */
export interface CustomerForwarding {
  readonly changed: boolean;
  readonly added: ReadonlySet<string>;
}

/** No field added to the caller's body. */
export const NO_FIELDS: ReadonlySet<string> = new Set();
const UNCHANGED: CustomerForwarding = { changed: false, added: NO_FIELDS };
const USER_FIELD: ReadonlySet<string> = new Set(['user']);
const METADATA_FIELD: ReadonlySet<string> = new Set(['metadata']);
