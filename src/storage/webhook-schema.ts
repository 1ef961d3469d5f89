import type { BooleanColumn, IntegerColumn, NullableIntegerColumn } from './schema-columns.js';
import type { Database } from './database-schema.js';

/** Tables of signed webhooks and alert routes (migration 0030), in the conventions of database-schema.ts. */
export interface WebhookEndpointsTable {
  id: string;
  /** null: the operator's endpoint (deployment-wide events such as channel health). */
  account_id: string | null;
  url: string;
  description: string;
  /** `standard` (signed JSON) or `slack` (`{"text": …}`). */
  format: string;
  /** JSON array of event types; empty: every type. */
  event_types: string;
  enabled: BooleanColumn;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: NullableIntegerColumn;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface WebhookEventsTable {
  id: string;
  account_id: string | null;
  type: string;
  /** The JSON body every attempt of every delivery of the event sends. */
  body: string;
  created_at: IntegerColumn;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string | null;
  /** `pending`, `succeeded` or `failed`. */
  state: string;
  attempts: IntegerColumn;
  next_attempt_at: IntegerColumn;
  last_status: NullableIntegerColumn;
  last_error: string | null;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
  delivered_at: NullableIntegerColumn;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: IntegerColumn;
  started_at: IntegerColumn;
  status_code: NullableIntegerColumn;
  latency_ms: IntegerColumn;
  error: string | null;
  response_excerpt: string | null;
}

export interface AlertRoutesTable {
  account_id: string;
  mail: BooleanColumn;
  updated_at: IntegerColumn;
}

export type WebhookTables = {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  alert_routes: AlertRoutesTable;
};

export type WebhookDatabase = Database & WebhookTables;
