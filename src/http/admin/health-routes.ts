import { z } from 'zod';
import type { CatalogModel } from '../../catalog/catalog-model.js';
import { ALL_BUNDLED_MODELS, channelCatalog } from '../../catalog/channel-catalog.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { isoTime } from '../../management/time-input.js';
import { parseInput } from '../../management/parse-input.js';
import { METRICS_CONTENT_TYPE } from '../../metrics/metrics-listener.js';
import { testChannel } from '../../relay/channel-test.js';
import { relayDependencies } from '../../relay/relay-dependencies.js';
import type { BreakerSnapshot } from '../../routing/circuit-breaker.js';
import type { GatewayServices } from '../../services.js';
import type { Channel } from '../../domain/records.js';
import { channelStatus } from '../channel-status.js';
import { sendJson, sendRaw } from '../respond.js';
import { readBody } from '../read-body.js';
import { notFound } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';
import type { BreakerJson, ChannelHealthJson, ChannelTestResultJson, GatewayHealthJson } from '../../contract/channels.js';

function breakerJson(snapshot: BreakerSnapshot, windowMs: number): BreakerJson {
  return {
    state: snapshot.state,
    open_until: snapshot.state === 'closed' ? null : isoTime(snapshot.openUntil),
    open_reason: snapshot.openReason,
    cooldown_level: snapshot.level,
    consecutive_failures: snapshot.consecutiveFailures,
    recent: { window_seconds: Math.round(windowMs / 1000), successes: snapshot.recent.successes, failures: snapshot.recent.failures },
    last_error: snapshot.lastFailureClass === null || snapshot.lastFailureAt === null ? null : { class: snapshot.lastFailureClass, at: isoTime(snapshot.lastFailureAt) },
    last_success_at: isoTime(snapshot.lastSuccessAt),
  };
}

/** What balancing reads of a channel-model in this process: the moving average of its time to first byte. */
function loadJson(services: GatewayServices, channel: Channel, model: string): { latency_ms: number | null } {
  const latency = services.health.load.latencyMs(channel.id, model);
  return { latency_ms: latency === null ? null : Math.round(latency) };
}

/** A channel's health as the admin sees it: breakers, recent counts, last error, flagged keys; no URL, no key. */
export function channelHealthJson(services: GatewayServices, channel: Channel): ChannelHealthJson {
  const report = services.health.report(channel);
  const windowMs = services.config.routing.breakerWindowMs;
  return {
    object: 'channel.health',
    channel_id: channel.id,
    name: channel.name,
    type: channel.type,
    enabled: channel.enabled,
    status: channelStatus(services, channel),
    served_models: services.catalog.servedModelCount(channel),
    breaker: breakerJson(report.channel, windowMs),
    models: report.models.map(({ model, ...snapshot }) => ({ model, ...breakerJson(snapshot, windowMs), ...loadJson(services, channel, model) })),
    in_flight: services.health.load.inFlight(channel.id),
    keys: channel.apiKeys.length,
    rejected_keys: services.credentials.rejectedKeys(channel).map((key) => ({ index: key.index, reason: key.reason, flagged_at: isoTime(key.flaggedAt) })),
  };
}

const testSchema = z.object({ model: z.string().min(1).optional() }).strict();

/**
 * GET /admin/health, GET /admin/channels/:id/health, POST /admin/channels/:id/test, POST
 * /admin/channels/:id/health/reset and GET /metrics (admin token) — docs/operators.md, "Routing and failover".
 */
export const HEALTH_ROUTES = adminRoutes((services: GatewayServices) => {
  const relay = relayDependencies(services, 1);
  const channelById = async (id: string): Promise<Channel> => {
    const channel = await services.storage.channels.getById(id);
    if (channel === null) throw notFound('channel', id);
    return channel;
  };
  return { services, relay, channelById };
}, [
  { method: 'GET', path: '/admin/health', handler: ({ services }) => async (context) => {
    const channels = await services.storage.channels.listAll();
    const reports = channels.map((channel) => channelHealthJson(services, channel));
    const enabled = reports.filter((report) => report.status !== 'disabled');
    const down = enabled.filter((report) => report.status === 'down').length;
    const degraded = enabled.filter((report) => report.status === 'degraded').length;
    const health: GatewayHealthJson = {
      object: 'health',
      status: enabled.length > 0 && down === enabled.length ? 'down' : down + degraded > 0 ? 'degraded' : 'ok',
      shared: services.config.redisUrl !== null,
      channels: reports,
    };
    sendJson(context, 200, health);
  } },

  { method: 'GET', path: '/admin/channels/:id/health', handler: ({ services, channelById }) => async (context) => {
    sendJson(context, 200, channelHealthJson(services, await channelById(context.params.id ?? '')));
  } },

  { method: 'POST', path: '/admin/channels/:id/health/reset', handler: ({ services, channelById }) => async (context) => {
    const channel = await channelById(context.params.id ?? '');
    services.health.reset(channel.id);
    services.credentials.forgetChannel(channel.id);
    sendJson(context, 200, channelHealthJson(services, channel));
  } },

  { method: 'POST', path: '/admin/channels/:id/test', handler: ({ services, relay, channelById }) => async (context) => {
    const channel = await channelById(context.params.id ?? '');
    // The body is optional: an empty POST tests the channel's first model.
    const raw = await readBody(context, 64 * 1024);
    let body: unknown = {};
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new GatewayError('invalid_json', 'Request body is not valid JSON.');
      }
    }
    const input = parseInput(testSchema, body);
    const model = input.model ?? firstModelOf(services, channel);
    if (model === undefined) throw new GatewayError('bad_request', 'The channel serves no model to test.', { param: 'model' });
    const upstreamModel = upstreamNameOn(services, channel, model);
    if (upstreamModel === null) throw new GatewayError('bad_request', `The channel does not serve model '${model}'.`, { param: 'model' });
    const abort = new AbortController();
    const onClose = (): void => {
      if (!context.response.writableFinished) abort.abort();
    };
    context.response.once('close', onClose);
    try {
      const modelKind = services.catalog.model(model)?.kind;
      const result = await testChannel(relay, channel, model, upstreamModel, abort.signal, modelKind === undefined ? {} : { modelKind });
      const tested: ChannelTestResultJson = {
        object: 'channel.test',
        channel_id: channel.id,
        ok: result.ok,
        outcome: result.outcome,
        model: result.model,
        upstream_model: result.upstreamModel,
        latency_ms: result.latencyMs,
        upstream_status: result.upstreamStatus,
        failure_class: result.failureClass,
        message: result.message,
        health: channelHealthJson(services, channel),
      };
      sendJson(context, 200, tested);
    } finally {
      context.response.off('close', onClose);
    }
  } },

  { method: 'GET', path: '/metrics', handler: ({ services }) => async (context) => {
    sendRaw(context, 200, services.metrics.render(), METRICS_CONTENT_TYPE);
  } },
]);

/** The name the channel's upstream knows a model by: its own mapping, or the catalog's route (`*` channels). */
function upstreamNameOn(services: GatewayServices, channel: Channel, model: string): string | null {
  const mapped = channel.models[model];
  if (mapped !== undefined && model !== ALL_BUNDLED_MODELS) return mapped === '' ? (services.catalog.model(model)?.upstream ?? model) : mapped;
  const routed = services.catalog.routes(model).find((route) => route.channel.id === channel.id)?.upstreamModel;
  if (routed !== undefined) return routed;
  // A disabled `*` channel has no routes; the catalog still knows what it would ask for.
  const bundled = ALL_BUNDLED_MODELS in channel.models ? channelCatalog(channel) : null;
  const known = bundled === null ? undefined : services.catalog.model(model);
  return known === undefined || known.provider !== bundled?.provider || !bundled.serves(known.id) ? null : (known.upstream ?? known.id);
}

/** The model an empty test request tries: the first the channel names, or for a `*` channel its cheapest chat model. */
function firstModelOf(services: GatewayServices, channel: Channel): string | undefined {
  const named = Object.keys(channel.models).find((model) => model !== ALL_BUNDLED_MODELS);
  if (named !== undefined) return named;
  const served = services.catalog.models().filter((model) => model.kind === 'chat' && services.catalog.routes(model.id).some((route) => route.channel.id === channel.id));
  const price = (model: CatalogModel): bigint => model.pricing.inputPerMtokNano ?? 0n;
  return served.sort((left, right) => (price(left) < price(right) ? -1 : price(left) > price(right) ? 1 : left.id.localeCompare(right.id)))[0]?.id;
}
