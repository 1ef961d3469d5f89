import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import { channelStatus } from '../channel-status.js';
import { enforcePublicRateLimit } from '../public-rate-limit.js';
import type { RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';

const VERSION = '0.1.0';

/**
 * GET /api/status: storage and channel health, no key. Each channel's `status` comes from its breakers and keys
 * (operational, degraded, down, disabled); no URL or key is shown. The overall status is `ok` when every enabled
 * channel is operational (or there is none), `down` when storage is unreachable or every enabled channel is down,
 * else `degraded`.
 */
export function statusRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    await enforcePublicRateLimit(context, services);
    const storageOk = await services.storage.ping().catch(() => false);
    const channels = services.catalog.channels().map((channel) => ({
      name: channel.name,
      type: channel.type,
      status: channelStatus(services, channel),
      models: services.catalog.servedModelCount(channel),
    }));
    const enabled = channels.filter((channel) => channel.status !== 'disabled');
    const allDown = enabled.length > 0 && enabled.every((channel) => channel.status === 'down');
    // Channels that exist but are all disabled serve nothing: degraded, as is anything short of operational.
    const allOperational = (enabled.length > 0 || channels.length === 0) && enabled.every((channel) => channel.status === 'operational');
    sendJson(context, storageOk ? 200 : 503, {
      status: !storageOk || allDown ? 'down' : allOperational ? 'ok' : 'degraded',
      version: VERSION,
      uptime_seconds: Math.floor((services.clock.now() - services.startedAt) / 1000),
      storage: { ok: storageOk, dialect: services.storage.dialect },
      channels,
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
      data: announcements.map((item) => ({
        id: item.id,
        title: item.title,
        body: item.body,
        level: item.level,
        published_at: new Date(item.publishedAt).toISOString(),
        expires_at: item.expiresAt === null ? null : new Date(item.expiresAt).toISOString(),
      })),
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
