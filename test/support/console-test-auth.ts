/**
 * A test-only stand-in for the console's session layer: the caller names its actor in `x-test-actor`
 * (`<accountId>:<userId>:<role>:<email>`). The money routes take whatever `authenticate` resolves, so this lets
 * tests drive them over real HTTP before the console's sessions exist.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BILLING_CONSOLE_ROUTES } from '../../src/console-billing/billing-routes.js';
import { REFERRAL_CONSOLE_ROUTES } from '../../src/console-billing/referral-routes.js';
import { SUPPORT_CONSOLE_ROUTES } from '../../src/console-billing/support-routes.js';
import type { Authenticate, ConsoleActorIdentity, ConsoleRole } from '../../src/console-billing/console-actor.js';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { createListener } from '../../src/http/create-listener.js';
import { Router } from '../../src/http/router.js';
import type { GatewayServices } from '../../src/services.js';

const ROLES: readonly ConsoleRole[] = ['owner', 'admin', 'developer', 'billing', 'viewer'];

export const testAuthenticate: Authenticate = async (context) => {
  const header = context.request.headers['x-test-actor'];
  const [accountId, userId, role, email] = (typeof header === 'string' ? header : '').split(':');
  if (accountId === undefined || accountId === '' || userId === undefined || email === undefined || !ROLES.some((known) => known === role)) {
    throw new GatewayError('invalid_api_key', 'No test actor.');
  }
  // The stand-in's actors have proven their mailbox: the console's own sessions decide that for real.
  return { accountId, userId, role: role as ConsoleRole, email, requireProvenMailbox: async () => undefined };
};

export function actorHeader(actor: ConsoleActorIdentity): Record<string, string> {
  return { 'x-test-actor': `${actor.accountId}:${actor.userId}:${actor.role}:${actor.email}` };
}

export interface ConsoleTestServer {
  url: string;
  close(): Promise<void>;
}

/** The console money routes on their own 127.0.0.1 listener, over the gateway's real services. */
export async function startConsoleTestServer(services: GatewayServices): Promise<ConsoleTestServer> {
  const router = new Router();
  for (const route of [...BILLING_CONSOLE_ROUTES, ...REFERRAL_CONSOLE_ROUTES, ...SUPPORT_CONSOLE_ROUTES]) {
    if (route.who !== 'caller') throw new Error(`${route.method} ${route.path} expects the console's session layer.`);
    router.add(route.method, route.path, route.handler({ services, authenticate: testAuthenticate }));
  }
  const server: Server = createServer(createListener({ router, logger: services.logger, clientIp: services.clientIp }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
