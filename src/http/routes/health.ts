import type { GatewayServices } from '../../services.js';
import type { RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';

/** GET /healthz: the process is alive and its event loop answers. Never touches a dependency. */
export function livenessRoute(): RouteHandler {
  return async (context) => {
    sendJson(context, 200, { status: 'ok' }, { 'cache-control': 'no-store' });
  };
}

/**
 * GET /readyz: 200 when this instance should take traffic (database up, migrations current, not draining, not
 * shedding load; Redis down only degrades the limits), else 503 with what is wrong. No key needed; the answer names no host, URL or error text.
 */
export function readinessRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const report = await services.readiness.check();
    const checks = { database: report.database, redis: report.redis, migrations: report.migrations, draining: report.draining, overloaded: report.overloaded };
    if (report.ready) {
      sendJson(context, 200, { status: 'ready', checks }, { 'cache-control': 'no-store' });
      return;
    }
    const failing = [
      report.database === 'ok' ? null : 'database unavailable',
      report.migrations === 'current' ? null : `migrations ${report.migrations}`,
      report.draining ? 'draining for shutdown' : null,
      report.overloaded ? 'shedding load' : null,
    ].filter((reason) => reason !== null);
    sendJson(context, 503, {
      status: 'unready',
      checks,
      error: { message: `Not ready: ${failing.join(', ')}.`, type: 'server_error', code: 'not_ready' },
    }, { 'cache-control': 'no-store', 'retry-after': '1' });
  };
}
