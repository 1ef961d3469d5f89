import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { pageJson, pageRequestFrom } from '../../management/pagination.js';
import { parseInput } from '../../management/parse-input.js';
import type { AuditQuery } from '../../storage/repositories/operator-repository.js';
import { countAuthAttempt } from '../auth-limits.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { userJson } from '../console-views.js';
import { hashConsolePassword, verifyConsolePassword } from '../password-hashing.js';
import { assertStrongPassword, PASSWORD_MAX_LENGTH } from '../password-policy.js';
import { startSession } from '../session-store.js';
import { recordAudit } from './audit-log.js';
import { AUDIT_CSV_HEADER, auditCsvLine, auditJson } from './operator-json.js';
import { activeOperator, permissionsOf, secondFactorMissing } from './operator-route.js';
import { grantOperator } from './operator-users.js';
import { CSV_COLUMNS, writeCsv } from '../routes/usage-routes.js';
import { namedUsageQuery } from './usage-explorer-route.js';
import { consoleRoutes } from '../console-route-table.js';

const email = z.string().trim().toLowerCase().email().max(254);
const bootstrapSchema = z.object({ admin_token: z.string().min(1).max(400), email, password: z.string().min(1).max(PASSWORD_MAX_LENGTH * 4) }).strict();

/** Most rows one CSV export writes. */
const CSV_MAX_ROWS = 100_000;
const CSV_PAGE = 1000;

function auditQueryFrom(query: URLSearchParams): AuditQuery {
  const time = (name: string): number | undefined => {
    const value = query.get(name);
    if (value === null || value === '') return undefined;
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) throw new GatewayError('bad_request', `'${name}' must be an ISO 8601 time.`, { param: name });
    return ms;
  };
  const operatorId = query.get('operator');
  const search = query.get('q');
  return {
    ...(operatorId === null || operatorId === '' ? {} : { operatorId }),
    ...(search === null || search === '' ? {} : { search: search.slice(0, 200) }),
    ...(time('from') === undefined ? {} : { from: time('from') as number }),
    ...(time('to') === undefined ? {} : { to: time('to') as number }),
  };
}

/** The operator's console (docs/console-api.md, "Operator API"): identity, operators, the audit log, the admin bridge. */
export const OPERATOR_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;
  return { deps, storage, clock };
}, [
  { method: 'GET', path: '/api/operator/me', who: 'member', permission: null, handler: ({ deps }) => async ({ context, active }) => {
    const operator = await activeOperator(deps, active);
    sendJson(context, 200, { user: userJson(active.user), role: operator.role, two_factor_required: await secondFactorMissing(deps, active), permissions: permissionsOf(operator) });
  } },

  // The first operator, with the admin token: once, while there is no operator yet. A second factor is then
  // required before any operator route answers.
  { method: 'POST', path: '/api/operator/bootstrap', who: 'anyone', handler: ({ deps, storage, clock }) => async ({ context }) => {
    const input = parseInput(bootstrapSchema, await readConsoleBody(context));
    const attempt = await countAuthAttempt(deps, context, 'sign-in', 'operator-bootstrap');
    if (!deps.services.adminToken.verify(input.admin_token)) throw new GatewayError('invalid_admin_token', 'The admin token is not valid.', { param: 'admin_token' });
    await attempt.succeeded();
    if (await storage.operators.count() > 0) throw new GatewayError('operators_exist', 'The gateway already has operators; an owner grants operator roles from the console or the CLI.');
    const existing = await storage.console.getUserByEmail(input.email);
    if (existing !== null && !(await verifyConsolePassword(input.password, existing.passwordHash))) {
      throw new GatewayError('invalid_credentials', 'This email already has a console user: give its current password.', { param: 'password' });
    }
    if (existing === null) assertStrongPassword(input.password, input.email, 'password');
    const now = clock.now();
    const { user } = await grantOperator(storage, { email: input.email, passwordHash: existing?.passwordHash ?? await hashConsolePassword(input.password), role: 'owner', createdBy: null, now });
    const membership = (await storage.console.listMemberships(user.id))[0];
    if (membership === undefined) throw new GatewayError('forbidden', 'This user is not a member of any account.');
    const session = await startSession(deps, context, user.id, membership.accountId);
    await recordAudit(deps, { operatorId: user.id, operatorEmail: user.email, action: 'bootstrap owner with the admin token', target: `operator:${user.id}`, status: 201, before: null, after: { user_id: user.id, email: user.email, role: 'owner' }, ip: context.clientIp });
    sendJson(context, 201, { status: 'signed_in', user: userJson(user), role: 'owner', two_factor_required: user.totpSecret === null, csrf_token: session.csrfToken });
  } },

  { method: 'GET', path: '/api/operator/audit', who: 'operator', permission: 'read', handler: ({ storage }) => async ({ context }) => {
    const page = await storage.operators.listAudit(auditQueryFrom(context.query), pageRequestFrom(context.query));
    sendJson(context, 200, pageJson(page, auditJson));
  } },

  { method: 'GET', path: '/api/operator/audit.csv', who: 'operator', permission: 'read', handler: ({ storage, clock }) => async ({ context }) => {
    const query = auditQueryFrom(context.query);
    const response = context.response;
    response.statusCode = 200;
    response.setHeader('content-type', 'text/csv; charset=utf-8');
    response.setHeader('content-disposition', `attachment; filename="unigate-audit-${new Date(clock.now()).toISOString().slice(0, 10)}.csv"`);
    response.write(AUDIT_CSV_HEADER);
    let after: string | null = null;
    for (let written = 0; written < CSV_MAX_ROWS;) {
      const page = await storage.operators.listAudit(query, { limit: CSV_PAGE, after });
      for (const entry of page.data) response.write(auditCsvLine(entry));
      written += page.data.length;
      if (page.nextCursor === null) break;
      after = page.nextCursor;
    }
    response.end();
  } },

  // The whole deployment's usage log as CSV, with the same filters as /admin/usage (account_id, key_id, model, status, from, to).
  { method: 'GET', path: '/api/operator/usage.csv', who: 'operator', permission: 'read', handler: ({ deps, storage }) => async ({ context }) => {
    await deps.services.usageLog.flush();
    await writeCsv(deps, context, await namedUsageQuery(storage, context.query), ['account_id', 'channel_id', ...CSV_COLUMNS]);
  } },
]);
