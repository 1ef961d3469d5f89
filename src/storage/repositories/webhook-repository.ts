import { sql, type Expression, type Kysely, type Selectable, type SqlBool, type Updateable } from 'kysely';
import { newId } from '../../shared/ids.js';
import type { SecretBox } from '../../shared/secret-box.js';
import { signalWork } from '../../shared/work-signals.js';
import { eventBody, subscribesTo, type WebhookEventDraft } from '../../domain/webhook-events.js';
import { fromBoolean, parseStringArray, toBoolean, toJson, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { CommerceDatabase } from '../commerce-schema.js';
import type { WebhookAttemptsTable, WebhookDatabase, WebhookDeliveriesTable, WebhookEndpointsTable } from '../webhook-schema.js';

/** `standard`: the signed JSON event; `slack`: a Slack-compatible incoming webhook (`{"text": …}`, unsigned). */
export type WebhookFormat = 'standard' | 'slack';
export const WEBHOOK_FORMATS: readonly WebhookFormat[] = ['standard', 'slack'];

export type DeliveryState = 'pending' | 'succeeded' | 'failed';
const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'succeeded', 'failed'];

/** Whose endpoints: an account's, or (null) the operator's. Every query is bound to one owner. */
export type WebhookOwner = string | null;

export interface WebhookEndpoint {
  id: string;
  accountId: string | null;
  url: string;
  description: string;
  format: WebhookFormat;
  /** Empty: every event type of the owner. */
  eventTypes: string[];
  enabled: boolean;
  /** When the previous secret stops being signed with (null: no rotation in progress). */
  previousSecretUntil: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewWebhookEndpoint extends Omit<WebhookEndpoint, 'previousSecretUntil'> {
  /** `whsec_<base64>`; stored sealed. */
  secret: string;
}

export type WebhookEndpointPatch = Partial<Pick<WebhookEndpoint, 'url' | 'description' | 'eventTypes' | 'enabled'>>;

export interface WebhookAttempt {
  attempt: number;
  startedAt: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
}

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
}

/** A due delivery with what sending it needs. */
export interface DueDelivery extends WebhookDelivery {
  url: string;
  format: WebhookFormat;
  /** The current secret, then the previous one while its overlap lasts. */
  secrets: string[];
  body: string;
}

export interface AttemptOutcome {
  attempt: WebhookAttempt;
  /** `succeeded`, `failed` (no attempt left) or `pending` with the next attempt's time. */
  state: DeliveryState;
  nextAttemptAt: number;
}

export interface WebhookRepository {
  createEndpoint(endpoint: NewWebhookEndpoint): Promise<void>;
  getEndpoint(owner: WebhookOwner, id: string): Promise<WebhookEndpoint | null>;
  listEndpoints(owner: WebhookOwner): Promise<WebhookEndpoint[]>;
  updateEndpoint(owner: WebhookOwner, id: string, patch: WebhookEndpointPatch, now: number): Promise<WebhookEndpoint | null>;
  /** Deletes the endpoint with its deliveries and their log; false when the owner has no such endpoint. */
  deleteEndpoint(owner: WebhookOwner, id: string): Promise<boolean>;
  /** A new current secret; the old one is still signed with until `previousUntil`. */
  rotateSecret(owner: WebhookOwner, id: string, secret: string, previousUntil: number, now: number): Promise<WebhookEndpoint | null>;
  /**
   * Records the event once (a second recording of the same id changes nothing) and one delivery per enabled
   * endpoint of its owner that subscribes to its type (only `endpointId` when given). True when it was new.
   */
  recordEvent(event: WebhookEventDraft, endpointId?: string): Promise<boolean>;
  listDue(now: number, limit: number): Promise<DueDelivery[]>;
  /** Takes a due delivery until `leaseUntil`, conditional on the attempt count read: true for one caller. */
  lease(delivery: Pick<WebhookDelivery, 'id' | 'attempts'>, leaseUntil: number, now: number): Promise<boolean>;
  /** Logs the leased attempt and moves the delivery on (only while the lease holds: `attempts` matches). */
  finishAttempt(deliveryId: string, outcome: AttemptOutcome, now: number): Promise<void>;
  listDeliveries(owner: WebhookOwner, endpointId: string, limit: number): Promise<Array<WebhookDelivery & { log: WebhookAttempt[] }>>;
  /** Sends a delivery again (same event id) from `now`; false when the owner has no such delivery or it is being sent. */
  resend(owner: WebhookOwner, endpointId: string, deliveryId: string, now: number): Promise<boolean>;
  /**
   * Deletes at most `limit` deliveries that ended (succeeded or failed) before `before`, with their log, and the
   * events no delivery refers to any more; returns how many deliveries went.
   */
  prune(before: number, limit: number): Promise<number>;
  /** Whether the account's alerts are mailed (true unless turned off). */
  alertMail(accountId: string): Promise<boolean>;
  setAlertMail(accountId: string, mail: boolean, now: number): Promise<void>;
}

/** At most this many attempts are kept per delivery in the log shown (the newest). */
const LOG_PER_DELIVERY = 20;

/** The row belongs to `owner`: an account's id never matches the operator's rows (null), nor the reverse. */
function ownerIs(column: string, owner: WebhookOwner): Expression<SqlBool> {
  return owner === null ? sql<SqlBool>`${sql.ref(column)} is null` : sql<SqlBool>`${sql.ref(column)} = ${owner}`;
}

function toEndpoint(row: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    description: row.description,
    format: toOneOf(row.format, WEBHOOK_FORMATS, 'webhook format'),
    eventTypes: parseStringArray(row.event_types, 'webhook event types'),
    enabled: toBoolean(row.enabled),
    previousSecretUntil: toNullableNumber(row.previous_secret_until),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function toDelivery(row: Selectable<WebhookDeliveriesTable> & { type: string }): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.type,
    endpointId: row.endpoint_id,
    state: toOneOf(row.state, DELIVERY_STATES, 'webhook delivery state'),
    attempts: toNumber(row.attempts),
    nextAttemptAt: toNumber(row.next_attempt_at),
    lastStatus: toNullableNumber(row.last_status),
    lastError: row.last_error,
    createdAt: toNumber(row.created_at),
    deliveredAt: toNullableNumber(row.delivered_at),
  };
}

function toAttempt(row: Selectable<WebhookAttemptsTable>): WebhookAttempt {
  return {
    attempt: toNumber(row.attempt),
    startedAt: toNumber(row.started_at),
    statusCode: toNullableNumber(row.status_code),
    latencyMs: toNumber(row.latency_ms),
    error: row.error,
    responseExcerpt: row.response_excerpt,
  };
}

/**
 * The webhook tables through another repository's transaction (the top-up's, the invoice's): the same connection,
 * seen with the tables of migration 0030, which every schema this build opens has.
 */
export function webhookTablesOf(trx: Kysely<CommerceDatabase>): Kysely<WebhookDatabase> {
  return trx as unknown as Kysely<WebhookDatabase>;
}

/**
 * Records an event and its deliveries with `db`, which may be a transaction of the code where the fact happens
 * (the top-up's, the refund's): the event exists exactly when the fact does.
 */
export async function insertWebhookEvent(db: Kysely<WebhookDatabase>, event: WebhookEventDraft, endpointId?: string): Promise<boolean> {
  let endpoints = db.selectFrom('webhook_endpoints').select(['id', 'event_types']).where('enabled', '=', 1).where(ownerIs('account_id', event.accountId));
  if (endpointId !== undefined) endpoints = endpoints.where('id', '=', endpointId);
  const subscribed = (await endpoints.execute()).filter((row) => {
    const types = parseStringArray(row.event_types, 'webhook event types');
    return endpointId !== undefined || subscribesTo(types, event.type);
  });
  // Nobody listens: nothing is kept (an owner who subscribes later hears of later facts).
  if (subscribed.length === 0) return false;
  const inserted = await db.insertInto('webhook_events')
    .values({ id: event.id, account_id: event.accountId, type: event.type, body: eventBody(event), created_at: event.createdAt })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  // Recorded before: its deliveries were made then.
  if (inserted === undefined) return false;
  await db.insertInto('webhook_deliveries').values(subscribed.map((endpoint) => ({
    id: newId('whd', event.createdAt),
    event_id: event.id,
    endpoint_id: endpoint.id,
    account_id: event.accountId,
    state: 'pending',
    attempts: 0,
    next_attempt_at: event.createdAt,
    last_status: null,
    last_error: null,
    created_at: event.createdAt,
    updated_at: event.createdAt,
    delivered_at: null,
  }))).execute();
  signalWork('webhooks');
  return true;
}

export function createWebhookRepository(db: Kysely<WebhookDatabase>, secretBox: SecretBox): WebhookRepository {
  const getEndpoint = async (owner: WebhookOwner, id: string): Promise<WebhookEndpoint | null> => {
    const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where(ownerIs('account_id', owner)).executeTakeFirst();
    return row === undefined ? null : toEndpoint(row);
  };

  return {
    async createEndpoint(endpoint) {
      await db.insertInto('webhook_endpoints').values({
        id: endpoint.id,
        account_id: endpoint.accountId,
        url: endpoint.url,
        description: endpoint.description,
        format: endpoint.format,
        event_types: toJson(endpoint.eventTypes),
        enabled: fromBoolean(endpoint.enabled),
        secret_sealed: secretBox.seal(endpoint.secret),
        previous_secret_sealed: null,
        previous_secret_until: null,
        created_at: endpoint.createdAt,
        updated_at: endpoint.updatedAt,
      }).execute();
    },

    getEndpoint,

    async listEndpoints(owner) {
      const rows = await db.selectFrom('webhook_endpoints').selectAll().where(ownerIs('account_id', owner)).orderBy('created_at').orderBy('id').limit(200).execute();
      return rows.map(toEndpoint);
    },

    async updateEndpoint(owner, id, patch, now) {
      const changes: Updateable<WebhookEndpointsTable> = { updated_at: now };
      if (patch.url !== undefined) changes.url = patch.url;
      if (patch.description !== undefined) changes.description = patch.description;
      if (patch.eventTypes !== undefined) changes.event_types = toJson(patch.eventTypes);
      if (patch.enabled !== undefined) changes.enabled = fromBoolean(patch.enabled);
      const updated = await db.updateTable('webhook_endpoints').set(changes).where('id', '=', id).where(ownerIs('account_id', owner)).executeTakeFirst();
      return updated.numUpdatedRows === 0n ? null : getEndpoint(owner, id);
    },

    async deleteEndpoint(owner, id) {
      return db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom('webhook_endpoints').where('id', '=', id).where(ownerIs('account_id', owner)).executeTakeFirst();
        if (deleted.numDeletedRows === 0n) return false;
        const deliveries = trx.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id);
        await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
        await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
        return true;
      });
    },

    async rotateSecret(owner, id, secret, previousUntil, now) {
      const row = await db.selectFrom('webhook_endpoints').select('secret_sealed').where('id', '=', id).where(ownerIs('account_id', owner)).executeTakeFirst();
      if (row === undefined) return null;
      await db.updateTable('webhook_endpoints').set({
        secret_sealed: secretBox.seal(secret),
        previous_secret_sealed: row.secret_sealed,
        previous_secret_until: previousUntil,
        updated_at: now,
      }).where('id', '=', id).where('secret_sealed', '=', row.secret_sealed).where(ownerIs('account_id', owner)).execute();
      return getEndpoint(owner, id);
    },

    recordEvent(event, endpointId) {
      return db.transaction().execute((trx) => insertWebhookEvent(trx, event, endpointId));
    },

    async listDue(now, limit) {
      const rows = await db.selectFrom('webhook_deliveries')
        .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
        .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
        .selectAll('webhook_deliveries')
        .select([
          'webhook_events.type', 'webhook_events.body', 'webhook_endpoints.url', 'webhook_endpoints.format',
          'webhook_endpoints.secret_sealed', 'webhook_endpoints.previous_secret_sealed', 'webhook_endpoints.previous_secret_until',
        ])
        .where('webhook_deliveries.state', '=', 'pending')
        .where('webhook_deliveries.next_attempt_at', '<=', now)
        .where('webhook_endpoints.enabled', '=', 1)
        .orderBy('webhook_deliveries.next_attempt_at').limit(limit).execute();
      return rows.map((row) => {
        const secrets = [secretBox.open(row.secret_sealed)];
        const until = toNullableNumber(row.previous_secret_until);
        if (row.previous_secret_sealed !== null && until !== null && until > now) secrets.push(secretBox.open(row.previous_secret_sealed));
        return { ...toDelivery(row), url: row.url, format: toOneOf(row.format, WEBHOOK_FORMATS, 'webhook format'), secrets, body: row.body };
      });
    },

    async lease(delivery, leaseUntil, now) {
      const result = await db.updateTable('webhook_deliveries')
        .set({ attempts: delivery.attempts + 1, next_attempt_at: leaseUntil, updated_at: now })
        .where('id', '=', delivery.id).where('state', '=', 'pending')
        .where('attempts', '=', delivery.attempts).where('next_attempt_at', '<=', now)
        .executeTakeFirst();
      return result.numUpdatedRows === 1n;
    },

    async finishAttempt(deliveryId, outcome, now) {
      const { attempt } = outcome;
      await db.transaction().execute(async (trx) => {
        const updated = await trx.updateTable('webhook_deliveries').set({
          state: outcome.state,
          next_attempt_at: outcome.nextAttemptAt,
          last_status: attempt.statusCode,
          last_error: attempt.error,
          updated_at: now,
          ...(outcome.state === 'succeeded' ? { delivered_at: now } : {}),
        }).where('id', '=', deliveryId).where('state', '=', 'pending').where('attempts', '=', attempt.attempt).executeTakeFirst();
        if (updated.numUpdatedRows === 0n) return;
        await trx.insertInto('webhook_attempts').values({
          id: newId('wha', now),
          delivery_id: deliveryId,
          attempt: attempt.attempt,
          started_at: attempt.startedAt,
          status_code: attempt.statusCode,
          latency_ms: attempt.latencyMs,
          error: attempt.error,
          response_excerpt: attempt.responseExcerpt,
        }).execute();
      });
    },

    async listDeliveries(owner, endpointId, limit) {
      const rows = await db.selectFrom('webhook_deliveries')
        .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
        .selectAll('webhook_deliveries').select('webhook_events.type')
        .where('webhook_deliveries.endpoint_id', '=', endpointId).where(ownerIs('webhook_deliveries.account_id', owner))
        .orderBy('webhook_deliveries.created_at', 'desc').orderBy('webhook_deliveries.id', 'desc').limit(limit).execute();
      if (rows.length === 0) return [];
      const attempts = await db.selectFrom('webhook_attempts').selectAll()
        .where('delivery_id', 'in', rows.map((row) => row.id)).orderBy('attempt', 'desc').execute();
      const byDelivery = new Map<string, WebhookAttempt[]>();
      for (const row of attempts) {
        const list = byDelivery.get(row.delivery_id) ?? [];
        if (list.length < LOG_PER_DELIVERY) list.push(toAttempt(row));
        byDelivery.set(row.delivery_id, list);
      }
      return rows.map((row) => ({ ...toDelivery(row), log: byDelivery.get(row.id) ?? [] }));
    },

    async resend(owner, endpointId, deliveryId, now) {
      const updated = await db.updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: now, updated_at: now })
        .where('id', '=', deliveryId).where('endpoint_id', '=', endpointId)
        // One being sent right now (leased) is left alone; any other state is sent again.
        .where((where) => where.or([where('state', '<>', 'pending'), where('next_attempt_at', '<=', now)])).where(ownerIs('account_id', owner))
        .executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) return false;
      signalWork('webhooks');
      return true;
    },

    async prune(before, limit) {
      const ended = await db.selectFrom('webhook_deliveries').select(['id', 'event_id'])
        .where('state', 'in', ['succeeded', 'failed']).where('updated_at', '<', before).limit(limit).execute();
      if (ended.length === 0) return 0;
      const ids = ended.map((row) => row.id);
      const events = [...new Set(ended.map((row) => row.event_id))];
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
        await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
        await trx.deleteFrom('webhook_events').where('id', 'in', events)
          .where((where) => where.not(where.exists(where.selectFrom('webhook_deliveries').select(sql.lit(1).as('one')).whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id'))))
          .execute();
      });
      return ended.length;
    },

    async alertMail(accountId) {
      const row = await db.selectFrom('alert_routes').select('mail').where('account_id', '=', accountId).executeTakeFirst();
      return row === undefined ? true : toBoolean(row.mail);
    },

    async setAlertMail(accountId, mail, now) {
      await db.insertInto('alert_routes').values({ account_id: accountId, mail: fromBoolean(mail), updated_at: now })
        .onConflict((conflict) => conflict.column('account_id').doUpdateSet({ mail: fromBoolean(mail), updated_at: now })).execute();
    },
  };
}
