import { z } from 'zod';
import { isoTime } from './common.js';

/** A webhook endpoint (the console's and the admin API's). Empty `event_types`: every event type of the owner. */
export const webhookEndpoint = z.strictObject({
  object: z.literal('webhook_endpoint'),
  id: z.string(),
  url: z.string(),
  description: z.string(),
  format: z.enum(['standard', 'slack']),
  event_types: z.array(z.string()),
  enabled: z.boolean(),
  /** Until when deliveries are signed with the previous secret too (null: no rotation in progress). */
  previous_secret_valid_until: isoTime.nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type WebhookEndpointJson = z.infer<typeof webhookEndpoint>;

/** POST …/webhooks and …/rotate: the signing secret is shown this once. */
export const webhookEndpointWithSecret = webhookEndpoint.extend({ secret: z.string() });
export type WebhookEndpointWithSecretJson = z.infer<typeof webhookEndpointWithSecret>;

/** GET …/webhooks: the endpoints and the event types the owner may subscribe to. */
export const webhookEndpointList = z.strictObject({ object: z.literal('list'), data: z.array(webhookEndpoint), event_types: z.array(z.string()) });
export type WebhookEndpointListJson = z.infer<typeof webhookEndpointList>;

/** One attempt to deliver an event. */
export const webhookAttempt = z.strictObject({
  attempt: z.number(),
  started_at: isoTime,
  status_code: z.number().nullable(),
  latency_ms: z.number(),
  error: z.string().nullable(),
  response_excerpt: z.string().nullable(),
});
export type WebhookAttemptJson = z.infer<typeof webhookAttempt>;

export const webhookDelivery = z.strictObject({
  object: z.literal('webhook_delivery'),
  id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  state: z.enum(['pending', 'succeeded', 'failed']),
  attempts: z.number(),
  next_attempt_at: isoTime.nullable(),
  last_status: z.number().nullable(),
  last_error: z.string().nullable(),
  created_at: isoTime,
  delivered_at: isoTime.nullable(),
  log: z.array(webhookAttempt),
});
export type WebhookDeliveryJson = z.infer<typeof webhookDelivery>;

/** GET …/webhooks/:id/deliveries: the newest first. */
export const webhookDeliveryList = z.strictObject({ object: z.literal('list'), data: z.array(webhookDelivery) });
export type WebhookDeliveryListJson = z.infer<typeof webhookDeliveryList>;

/** POST …/webhooks/:id/test: the `webhook.test` event recorded for the endpoint. */
export const webhookTestEvent = z.strictObject({ object: z.literal('webhook_event'), id: z.string(), type: z.literal('webhook.test') });
export type WebhookTestEventJson = z.infer<typeof webhookTestEvent>;
