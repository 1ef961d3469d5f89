import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import { enforcePublicRateLimit } from '../public-rate-limit.js';
import type { RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';

const VERSION = '0.1.0';

/** GET /api/status: storage and channel health, no key. */
export function statusRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    await enforcePublicRateLimit(context, services);
    const storageOk = await services.storage.ping().catch(() => false);
    const channels = services.catalog.channels().map((channel) => ({
      name: channel.name,
      type: channel.type,
      status: !channel.enabled ? 'disabled' : services.adapters.supports(channel.type) ? 'operational' : 'unsupported',
      models: Object.keys(channel.models).length,
    }));
    const operational = channels.some((channel) => channel.status === 'operational');
    sendJson(context, storageOk ? 200 : 503, {
      status: !storageOk ? 'down' : operational || channels.length === 0 ? 'ok' : 'degraded',
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
