import { openAIFamily } from '../../codecs/openai-chat/family.js';
import type { ServerResponse } from 'node:http';
import { GatewayError } from '../../errors/gateway-error.js';
import type { RequestContext, RouteHandler } from '../../http/request-context.js';
import { Router } from '../../http/router.js';
import { ADMIN_ROUTES } from '../../admin-routes.js';
import { adminOnly } from '../../http/admin/admin-guard.js';
import { adminPermissionOf, type AdminPermission } from '../../http/admin/admin-route.js';
import type { GatewayServices } from '../../services.js';
import type { ConsoleDeps } from '../console-deps.js';
import { consoleRoutes } from '../console-route-table.js';
import { recordAudit } from './audit-log.js';
import { redactedJsonText } from './audit-redaction.js';
import { operatorRoute, type OperatorRequest } from './operator-route.js';
import { operatorAllows } from './operator-roles.js';
import type { ConsoleOperator } from '../../storage/repositories/operator-repository.js';

const BRIDGE_PREFIX = '/api/operator/admin/';

/**
 * The admin API's own handlers (ADMIN_ROUTES, the ones /admin/* serves on the API listener), and the permission
 * each route's entry asks of an operator.
 */
function adminRouter(services: GatewayServices): { router: Router; permissionOf(method: string, adminPath: string): AdminPermission } {
  const router = new Router();
  const permissions = new Map<RouteHandler, AdminPermission>();
  for (const route of ADMIN_ROUTES) {
    const handler = adminOnly(services, route.handler(services));
    permissions.set(handler, adminPermissionOf(route));
    router.add(route.method, route.path, handler);
  }
  return {
    router,
    // A path no route serves is answered 404 after this check: reads need `read`, anything else `write`.
    permissionOf: (method, adminPath) => {
      const match = router.match(method, adminPath);
      return (match.kind === 'found' ? permissions.get(match.handler) : undefined) ?? adminPermissionOf({ method: method === 'GET' || method === 'HEAD' ? 'GET' : 'POST' });
    },
  };
}

function adminPathOf(consolePath: string): string {
  return `/admin/${consolePath.slice(BRIDGE_PREFIX.length)}`;
}

/** Runs an admin handler on a copy of the request's context, as /admin/<path>, authorised as `operator`'s call. */
async function runAdmin(router: Router, context: RequestContext, operator: ConsoleOperator, method: string, adminPath: string, response: ServerResponse): Promise<boolean> {
  const match = router.match(method, adminPath);
  if (match.kind !== 'found') return false;
  const inner: RequestContext = {
    ...context, method, path: adminPath, params: match.params, response, family: openAIFamily, operatorAuthorised: true,
    operator: { userId: operator.userId, managesOperators: operatorAllows(operator.role, 'operators:manage') },
  };
  await match.handler(inner);
  return true;
}

/** A response stand-in that keeps what a read handler answers (the state before a change). */
function captureResponse(): { response: ServerResponse; result(): { status: number; body: string | null } } {
  let body: string | null = null;
  const state = { statusCode: 200, headersSent: false };
  const response = {
    get statusCode() {
      return state.statusCode;
    },
    set statusCode(value: number) {
      state.statusCode = value;
    },
    get headersSent() {
      return state.headersSent;
    },
    setHeader: () => response,
    appendHeader: () => response,
    writeHead: (status: number) => {
      state.statusCode = status;
      return response;
    },
    getHeader: () => undefined,
    end: (chunk?: unknown) => {
      if (typeof chunk === 'string') body = chunk;
      else if (Buffer.isBuffer(chunk)) body = chunk.toString('utf8');
      state.headersSent = true;
      return response;
    },
  };
  return { response: response as unknown as ServerResponse, result: () => ({ status: state.statusCode, body }) };
}

function idInJson(text: string | null): unknown {
  try {
    return (JSON.parse(text ?? '{}') as { id?: unknown }).id;
  } catch {
    return undefined;
  }
}

/**
 * The resource a change acts on, whose GET shows its state: the path itself for PATCH, PUT and DELETE; for POST the
 * path without its last segment (`/admin/accounts/:id/credits` → `/admin/accounts/:id`).
 */
function resourcePathOf(method: string, adminPath: string): string {
  return method === 'POST' ? adminPath.slice(0, adminPath.lastIndexOf('/')) : adminPath;
}

/**
 * The admin API on the console origin: `/api/operator/admin/<path>` runs the handler of `/admin/<path>` for a
 * signed-in operator whose role allows it (GET reads; changes are refused to viewers, and to support except ticket
 * replies). Every change that succeeds is written to the audit log before its answer leaves: the operator, the
 * action, the target, its state before (the resource's GET) and after (the answer), secrets removed, and the IP.
 */
function adminBridgeRoute(deps: ConsoleDeps): RouteHandler {
  const { router, permissionOf } = adminRouter(deps.services);
  return operatorRoute(deps, (context) => permissionOf(context.method, adminPathOf(context.path)), async ({ context, active, operator }: OperatorRequest) => {
    const adminPath = adminPathOf(context.path);
    if (context.method === 'GET' || context.method === 'HEAD') {
      if (!(await runAdmin(router, context, operator, context.method, adminPath, context.response))) throw new GatewayError('not_found', `No admin route for ${context.method} ${adminPath}.`);
      return;
    }
    const candidate = resourcePathOf(context.method, adminPath);
    let before: string | null = null;
    let resourcePath: string | null = null;
    const capture = captureResponse();
    if (await runAdmin(router, context, operator, 'GET', candidate, capture.response).catch(() => false)) {
      resourcePath = candidate;
      const read = capture.result();
      if (read.status === 200) before = redactedJsonText(read.body);
    }
    // Hold the answer until its audit entry is written.
    const response = context.response;
    const realEnd = response.end.bind(response);
    let held: string | null = null;
    let finished = false;
    response.end = ((chunk?: unknown) => {
      if (typeof chunk === 'string') held = chunk;
      else if (Buffer.isBuffer(chunk)) held = chunk.toString('utf8');
      finished = true;
      return response;
    }) as ServerResponse['end'];
    try {
      if (!(await runAdmin(router, context, operator, context.method, adminPath, response))) throw new GatewayError('not_found', `No admin route for ${context.method} ${adminPath}.`);
    } finally {
      response.end = realEnd;
    }
    if (!finished) return;
    const status = response.statusCode;
    if (status < 400) {
      const after = redactedJsonText(held);
      const createdId = resourcePath === null ? idInJson(held) : undefined;
      await recordAudit(deps, {
        operatorId: operator.userId, operatorEmail: active.user.email, action: `${context.method} ${adminPath}`,
        target: typeof createdId === 'string' ? `${adminPath}/${createdId}` : (resourcePath ?? adminPath),
        status, before, after, ip: context.clientIp,
      });
    }
    if (held === null) realEnd();
    else realEnd(held);
  });
}

/**
 * The bridge's routes: every method under /api/operator/admin/. Each call is authorised by the operator permission
 * of the admin route it reaches, so the route is `caller` here.
 */
export const ADMIN_BRIDGE_ROUTES = consoleRoutes((deps: ConsoleDeps) => ({ bridge: adminBridgeRoute(deps) }), (['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const).map((method) => ({
  method, path: `${BRIDGE_PREFIX}*`, who: 'caller' as const, handler: ({ bridge }: { bridge: RouteHandler }) => bridge,
})));
