import { z } from 'zod';
import type {
  WebhookAttemptJson, WebhookDeliveryJson, WebhookDeliveryListJson, WebhookEndpointJson, WebhookEndpointListJson, WebhookEndpointWithSecretJson, WebhookTestEventJson,
} from '../contract/webhooks.js';
import type { WebhookConfig } from '../config/webhook-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import { isoTime } from '../management/time-input.js';
import { parseInput } from '../management/parse-input.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import {
  WEBHOOK_FORMATS, type WebhookAttempt, type WebhookDelivery, type WebhookEndpoint, type WebhookOwner, type WebhookRepository,
} from '../storage/repositories/webhook-repository.js';
import { endpointUrlRefusal } from './endpoint-address.js';
import { ACCOUNT_EVENT_TYPES, FORMER_EVENT_NAMES, OPERATOR_EVENT_TYPES, webhookEvent } from '../domain/webhook-events.js';
import { newWebhookSecret } from './webhook-signature.js';
import { countTestEvent } from './test-event-limits.js';
import type { RateLimiter } from '../limits/rate-limiter.js';

/** Endpoints one owner (an account, or the operator) may have. */
export const MAX_ENDPOINTS = 20;
/** Deliveries listed per endpoint, newest first. */
const DELIVERIES_LISTED = 50;

const endpointFields = {
  url: z.string().min(1).max(2000),
  description: z.string().max(200),
  format: z.enum(WEBHOOK_FORMATS as [string, ...string[]]),
  event_types: z.array(z.string().min(1).max(100)).max(50),
  enabled: z.boolean(),
};
const createSchema = z.object({
  url: endpointFields.url,
  description: endpointFields.description.optional(),
  format: endpointFields.format.optional(),
  event_types: endpointFields.event_types.optional(),
  /** The operator contract's name of `event_types`. */
  events: endpointFields.event_types.optional(),
  enabled: endpointFields.enabled.optional(),
}).strict().refine((input) => input.event_types === undefined || input.events === undefined, { message: 'give event_types or events, not both', path: ['events'] });
const patchSchema = z.object({
  url: endpointFields.url.optional(),
  description: endpointFields.description.optional(),
  event_types: endpointFields.event_types.optional(),
  enabled: endpointFields.enabled.optional(),
}).strict();

export function endpointToJson(endpoint: WebhookEndpoint, now: number): WebhookEndpointJson {
  return {
    object: 'webhook_endpoint',
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    format: endpoint.format,
    event_types: endpoint.eventTypes,
    enabled: endpoint.enabled,
    previous_secret_valid_until: endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > now ? isoTime(endpoint.previousSecretUntil) : null,
    created_at: isoTime(endpoint.createdAt),
    updated_at: isoTime(endpoint.updatedAt),
  };
}

function attemptToJson(attempt: WebhookAttempt): WebhookAttemptJson {
  return {
    attempt: attempt.attempt,
    started_at: isoTime(attempt.startedAt),
    status_code: attempt.statusCode,
    latency_ms: attempt.latencyMs,
    error: attempt.error,
    response_excerpt: attempt.responseExcerpt,
  };
}

function deliveryToJson(delivery: WebhookDelivery & { log: WebhookAttempt[] }): WebhookDeliveryJson {
  return {
    object: 'webhook_delivery',
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    state: delivery.state,
    attempts: delivery.attempts,
    next_attempt_at: delivery.state === 'pending' ? isoTime(delivery.nextAttemptAt) : null,
    last_status: delivery.lastStatus,
    last_error: delivery.lastError,
    created_at: isoTime(delivery.createdAt),
    delivered_at: isoTime(delivery.deliveredAt),
    log: delivery.log.map(attemptToJson),
  };
}

/**
 * Managing one owner's endpoints, shared by the console (an account's owners and admins) and the admin API (the
 * operator's endpoints, owner null). Every call is bound to its owner: another owner's ids answer 404.
 */
export class WebhookManagement {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly clock: Clock,
    private readonly config: WebhookConfig,
    private readonly limiter: RateLimiter,
  ) {}

  eventTypes(owner: WebhookOwner): readonly string[] {
    return owner === null ? OPERATOR_EVENT_TYPES : ACCOUNT_EVENT_TYPES;
  }

  #checkTypes(owner: WebhookOwner, types: string[] | undefined): string[] | undefined {
    if (types === undefined) return undefined;
    const known = this.eventTypes(owner);
    // A former name is stored as the event's name now.
    const named = owner === null ? types : types.map((type) => FORMER_EVENT_NAMES[type] ?? type);
    const unknown = named.find((type) => !known.includes(type));
    if (unknown !== undefined) throw new GatewayError('bad_request', `Unknown event type '${unknown}'; known: ${known.join(', ')}.`, { param: 'event_types' });
    return [...new Set(named)];
  }

  #checkUrl(url: string | undefined): void {
    if (url === undefined) return;
    const refusal = endpointUrlRefusal(url, this.config);
    if (refusal !== null) throw new GatewayError('bad_request', refusal, { param: 'url' });
  }

  async #endpoint(owner: WebhookOwner, id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.webhooks.getEndpoint(owner, id);
    if (endpoint === null) throw new GatewayError('not_found', `No webhook endpoint with id '${id}'.`);
    return endpoint;
  }

  async list(owner: WebhookOwner): Promise<WebhookEndpointListJson> {
    const now = this.clock.now();
    const endpoints = await this.webhooks.listEndpoints(owner);
    return { object: 'list', data: endpoints.map((endpoint) => endpointToJson(endpoint, now)), event_types: [...this.eventTypes(owner)] };
  }

  async get(owner: WebhookOwner, id: string): Promise<WebhookEndpointJson> {
    return endpointToJson(await this.#endpoint(owner, id), this.clock.now());
  }

  /** Creates an endpoint; the answer carries its secret, shown this once. */
  async create(owner: WebhookOwner, body: unknown): Promise<WebhookEndpointWithSecretJson> {
    const input = parseInput(createSchema, body);
    this.#checkUrl(input.url);
    const eventTypes = this.#checkTypes(owner, input.event_types ?? input.events) ?? [];
    if ((await this.webhooks.listEndpoints(owner)).length >= MAX_ENDPOINTS) {
      throw new GatewayError('conflict', `At most ${MAX_ENDPOINTS} webhook endpoints; delete one first.`);
    }
    const now = this.clock.now();
    const secret = newWebhookSecret();
    const endpoint: WebhookEndpoint = {
      id: newId('whe', now), accountId: owner, url: input.url, description: input.description ?? '',
      format: input.format === 'slack' ? 'slack' : 'standard', eventTypes, enabled: input.enabled ?? true,
      previousSecretUntil: null, createdAt: now, updatedAt: now,
    };
    await this.webhooks.createEndpoint({ ...endpoint, secret });
    return { ...endpointToJson(endpoint, now), secret };
  }

  async update(owner: WebhookOwner, id: string, body: unknown): Promise<WebhookEndpointJson> {
    const input = parseInput(patchSchema, body);
    this.#checkUrl(input.url);
    const eventTypes = this.#checkTypes(owner, input.event_types);
    const updated = await this.webhooks.updateEndpoint(owner, id, {
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(eventTypes === undefined ? {} : { eventTypes }),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
    }, this.clock.now());
    if (updated === null) throw new GatewayError('not_found', `No webhook endpoint with id '${id}'.`);
    return endpointToJson(updated, this.clock.now());
  }

  async delete(owner: WebhookOwner, id: string): Promise<void> {
    if (!(await this.webhooks.deleteEndpoint(owner, id))) throw new GatewayError('not_found', `No webhook endpoint with id '${id}'.`);
  }

  /** A new secret (shown this once); the previous one still signs, beside it, for the configured overlap. */
  async rotate(owner: WebhookOwner, id: string): Promise<WebhookEndpointWithSecretJson> {
    const now = this.clock.now();
    const secret = newWebhookSecret();
    const rotated = await this.webhooks.rotateSecret(owner, id, secret, now + this.config.secretOverlapMs, now);
    if (rotated === null) throw new GatewayError('not_found', `No webhook endpoint with id '${id}'.`);
    return { ...endpointToJson(rotated, now), secret };
  }

  /** Records a `webhook.test` event for this endpoint alone. */
  async sendTest(owner: WebhookOwner, id: string): Promise<WebhookTestEventJson> {
    const endpoint = await this.#endpoint(owner, id);
    if (!endpoint.enabled) throw new GatewayError('conflict', 'The endpoint is disabled; enable it to send it a test event.');
    const now = this.clock.now();
    await countTestEvent(this.limiter, this.config.testEventsPerMinute, owner, endpoint.id, now);
    const event = webhookEvent('webhook.test', newId('test', now), owner, { endpoint_id: endpoint.id }, now);
    await this.webhooks.recordEvent(event, endpoint.id);
    return { object: 'webhook_event', id: event.id, type: 'webhook.test' };
  }

  async deliveries(owner: WebhookOwner, id: string): Promise<WebhookDeliveryListJson> {
    await this.#endpoint(owner, id);
    const deliveries = await this.webhooks.listDeliveries(owner, id, DELIVERIES_LISTED);
    return { object: 'list', data: deliveries.map(deliveryToJson) };
  }

  /** Sends a delivery again, with the same event id and body. */
  async resend(owner: WebhookOwner, id: string, deliveryId: string): Promise<void> {
    await this.#endpoint(owner, id);
    if (!(await this.webhooks.resend(owner, id, deliveryId, this.clock.now()))) {
      const known = (await this.webhooks.listDeliveries(owner, id, 1000)).some((delivery) => delivery.id === deliveryId);
      if (!known) throw new GatewayError('not_found', `No delivery with id '${deliveryId}' on this endpoint.`);
      throw new GatewayError('conflict', 'The delivery is being attempted or waits for its next retry; resend it once that attempt ends.');
    }
  }
}
