import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import type { Channel } from '../../domain/records.js';
import { readBuildInfo } from '../../shared/build-info.js';
import { announcementJson } from '../../management/announcement-json.js';
import { channelStatus, type PublicChannelStatus } from '../channel-status.js';
import { enforcePublicRateLimit } from '../public-rate-limit.js';
import type { RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';

/** A model family's health: `operational` when every model of it has an operational channel, `down` when none has a working one. */
type FamilyStatus = 'operational' | 'degraded' | 'down';

const STATUS_ORDER: Record<PublicChannelStatus, number> = { operational: 0, degraded: 1, down: 2, disabled: 2 };
const FAMILY_STATUS: readonly FamilyStatus[] = ['operational', 'degraded', 'down'];

/**
 * The public models that have a channel, grouped by family (`owned_by`, as GET /v1/models shows it): each family's
 * health from the best channel of each of its models. Nothing about the channels themselves (names, types, ids,
 * how many) leaves: those are the operator's (GET /admin/health).
 */
function modelFamilies(services: GatewayServices): Array<{ family: string; status: FamilyStatus; models: number }> {
  const channelStatuses = new Map<string, PublicChannelStatus>();
  const statusOf = (channel: Channel): PublicChannelStatus => {
    let status = channelStatuses.get(channel.id);
    if (status === undefined) channelStatuses.set(channel.id, (status = channelStatus(services, channel)));
    return status;
  };
  const families = new Map<string, { models: number; worst: number; best: number }>();
  for (const model of services.catalog.models()) {
    if (!model.public) continue;
    const routes = services.catalog.routes(model.id);
    if (routes.length === 0) continue;
    const modelStatus = Math.min(...routes.map((route) => STATUS_ORDER[statusOf(route.channel)]));
    const family = families.get(model.ownedBy) ?? { models: 0, worst: 0, best: 2 };
    family.models += 1;
    family.worst = Math.max(family.worst, modelStatus);
    family.best = Math.min(family.best, modelStatus);
    families.set(model.ownedBy, family);
  }
  return [...families].sort(([a], [b]) => a.localeCompare(b)).map(([family, { models, worst, best }]) => ({
    family,
    // Some models down and others not: the family is degraded, not down.
    status: worst === 2 && best < 2 ? 'degraded' : FAMILY_STATUS[worst] as FamilyStatus,
    models,
  }));
}

/**
 * GET /api/status: what a public status page needs, no key. The overall status is `ok` when every enabled channel is
 * operational (or there is none), `down` when storage is unreachable or every enabled channel is down, else
 * `degraded`; then the health of each model family, the build (package version and commit) and the uptime. Channel
 * names, types and ids are the operator's (GET /admin/health); the families' health is computed at most once a
 * second, however many callers ask.
 */
export function statusRoute(services: GatewayServices): RouteHandler {
  const build = readBuildInfo(services.config.sourceCommit);
  let families: { at: number; value: ReturnType<typeof modelFamilies> } | null = null;
  return async (context) => {
    await enforcePublicRateLimit(context, services);
    const storageOk = await services.storage.ping().catch(() => false);
    const now = services.clock.now();
    const channels = services.catalog.channels().map((channel) => channelStatus(services, channel));
    const enabled = channels.filter((status) => status !== 'disabled');
    const allDown = enabled.length > 0 && enabled.every((status) => status === 'down');
    // Channels that exist but are all disabled serve nothing: degraded, as is anything short of operational.
    const allOperational = (enabled.length > 0 || channels.length === 0) && enabled.every((status) => status === 'operational');
    if (families === null || now - families.at >= 1000) families = { at: now, value: modelFamilies(services) };
    sendJson(context, storageOk ? 200 : 503, {
      status: !storageOk || allDown ? 'down' : allOperational ? 'ok' : 'degraded',
      version: build.version,
      commit: build.commit,
      uptime_seconds: Math.floor((now - services.startedAt) / 1000),
      storage: { ok: storageOk },
      model_families: families.value,
    });
  };
}

/** GET /api/public/announcements: active announcements, newest first. */
export function announcementsRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    await enforcePublicRateLimit(context, services);
    const announcements = await services.storage.announcements.listActive(services.clock.now(), 50);
    sendJson(context, 200, {
      object: 'list',
      data: announcements.map(announcementJson),
    });
  };
}

/** GET /api/fx/latest: USD to JPY, CNY and EUR with their as-of time. */
export function fxLatestRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    await enforcePublicRateLimit(context, services);
    const fx = await services.storage.fx.get();
    if (fx === null) throw new GatewayError('upstream_unavailable', 'Exchange rates have not been published yet.', { status: 503 });
    const rates: Record<string, number> = {};
    for (const [currency, rate] of Object.entries(fx.rates)) rates[currency] = Number(rate);
    sendJson(context, 200, { base: fx.base, rates, as_of: new Date(fx.asOf).toISOString(), source: fx.source });
  };
}
