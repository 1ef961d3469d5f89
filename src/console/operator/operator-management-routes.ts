import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { OperatorGrantJson, OperatorListJson, OperatorRowJson } from '../../contract/operator.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import { isoTime } from '../../management/time-input.js';
import type { ConsoleUser } from '../../storage/repositories/console-repository.js';
import { OPERATOR_ROLES, type ConsoleOperator, type OperatorRole } from '../../storage/repositories/operator-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { sendConsoleMail } from '../console-mails.js';
import { readConsoleBody, sendNoContent } from '../console-route.js';
import { hashConsolePassword } from '../password-hashing.js';
import { issueToken } from '../routes/auth-routes.js';
import { recordAudit } from './audit-log.js';
import { type OperatorRequest } from './operator-route.js';
import { grantOperator } from './operator-users.js';
import { identityCheckSchema, resetSecondFactor } from './second-factor-reset.js';
import { consoleRoutes } from '../console-route-table.js';

const email = z.string().trim().toLowerCase().email().max(254);
const role = z.enum(OPERATOR_ROLES as [OperatorRole, ...OperatorRole[]]);
const grantSchema = z.object({ email, role }).strict();
const roleSchema = z.object({ role }).strict();

/** How long the link mailed to an invited operator lets them choose a password. */
const INVITATION_TTL_MS = 72 * 60 * 60 * 1000;

function operatorJson(operator: ConsoleOperator, user: ConsoleUser | null): OperatorRowJson {
  return {
    user_id: operator.userId,
    email: user?.email ?? null,
    role: operator.role,
    status: operator.disabledAt === null ? 'active' : 'disabled',
    two_factor_enabled: user?.totpSecret != null,
    created_at: isoTime(operator.createdAt),
    created_by: operator.createdBy,
    disabled_at: operator.disabledAt === null ? null : isoTime(operator.disabledAt),
    disabled_by: operator.disabledBy,
  };
}

/**
 * Operators managed from the console: everyone reads the list; an owner (`operators:manage`) invites or grants,
 * changes roles, disables and enables, resets a lost second factor and removes. Never on oneself (another owner
 * does it), so the acting owner always remains; every change goes to the audit log.
 */
export const OPERATOR_MANAGEMENT_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;

  const described = async (operator: ConsoleOperator): Promise<OperatorRowJson> => operatorJson(operator, await storage.console.getUserById(operator.userId));

  /** The operator the path names, other than the caller. */
  const otherOperator = async (request: OperatorRequest, refusal: string): Promise<ConsoleOperator> => {
    const id = request.context.params.id ?? '';
    if (id === request.operator.userId) throw new GatewayError('conflict', refusal);
    const found = await storage.operators.get(id);
    if (found === null) throw new GatewayError('not_found', `No operator with user id '${id}'.`);
    return found;
  };

  const audit = (request: OperatorRequest, action: string, target: string, status: number, before: unknown, after: unknown) => recordAudit(deps, {
    operatorId: request.operator.userId, operatorEmail: request.active.user.email, action, target: `operator:${target}`, status, before, after, ip: request.context.clientIp,
  });
  return { deps, storage, clock, described, otherOperator, audit };
}, [
  { method: 'GET', path: '/api/operator/operators', who: 'operator', permission: 'read', handler: ({ storage, described }) => async ({ context }) => {
    const operators = await storage.operators.list();
    sendJson(context, 200, { data: await Promise.all(operators.map(described)) } satisfies OperatorListJson);
  } },

  // A console user gets the role at once; a new email gets a console user (and an account of their own) with no
  // usable password, and a mailed link to choose one.
  { method: 'POST', path: '/api/operator/operators', who: 'operator', permission: 'operators:manage', handler: ({ deps, storage, clock, audit }) => async (request) => {
    const input = parseInput(grantSchema, await readConsoleBody(request.context));
    const existing = await storage.console.getUserByEmail(input.email);
    const before = existing === null ? null : await storage.operators.get(existing.id);
    const now = clock.now();
    const unusablePassword = existing === null ? await hashConsolePassword(randomBytes(32).toString('base64url')) : existing.passwordHash;
    const { user, created } = await grantOperator(storage, { email: input.email, passwordHash: unusablePassword, role: input.role, createdBy: request.operator.userId, now });
    if (created) void sendConsoleMail(deps, 'operator-invitation', user.email, await issueToken(deps, user.id, 'password-reset', INVITATION_TTL_MS));
    const after: OperatorGrantJson = { user_id: user.id, email: user.email, role: input.role, invited: created };
    await audit(request, created ? 'invite operator' : 'grant operator role', user.id, 201, before, after);
    sendJson(request.context, 201, after);
  } },

  { method: 'PATCH', path: '/api/operator/operators/:id', who: 'operator', permission: 'operators:manage', handler: ({ storage, audit }) => async (request) => {
    const input = parseInput(roleSchema, await readConsoleBody(request.context));
    const id = request.context.params.id ?? '';
    const before = await storage.operators.get(id);
    if (before === null) throw new GatewayError('not_found', `No operator with user id '${id}'.`);
    if (id === request.operator.userId && input.role !== 'owner') throw new GatewayError('conflict', 'You cannot lower your own role; another owner can.');
    await storage.operators.upsert({ ...before, role: input.role });
    await audit(request, 'change operator role', id, 200, before, { ...before, role: input.role });
    sendJson(request.context, 200, { user_id: id, role: input.role });
  } },

  { method: 'POST', path: '/api/operator/operators/:id/disable', who: 'operator', permission: 'operators:manage', handler: ({ storage, clock, described, otherOperator, audit }) => async (request) => {
    const before = await otherOperator(request, 'You cannot disable yourself; another owner can.');
    if (before.disabledAt === null) await storage.operators.setDisabled(before.userId, { at: clock.now(), by: request.operator.userId });
    const after = await described((await storage.operators.get(before.userId)) ?? before);
    await audit(request, 'disable operator', before.userId, 200, before, after);
    sendJson(request.context, 200, after);
  } },

  { method: 'POST', path: '/api/operator/operators/:id/enable', who: 'operator', permission: 'operators:manage', handler: ({ storage, described, otherOperator, audit }) => async (request) => {
    const before = await otherOperator(request, 'You are not disabled.');
    await storage.operators.setDisabled(before.userId, null);
    const after = await described((await storage.operators.get(before.userId)) ?? before);
    await audit(request, 'enable operator', before.userId, 200, before, after);
    sendJson(request.context, 200, after);
  } },

  { method: 'POST', path: '/api/operator/operators/:id/reset-two-factor', who: 'operator', permission: 'operators:manage', handler: ({ deps, storage, described, otherOperator, audit }) => async (request) => {
    const input = parseInput(identityCheckSchema, await readConsoleBody(request.context));
    const operator = await otherOperator(request, 'Change your own second factor under Security.');
    const user = await storage.console.getUserById(operator.userId);
    if (user === null || user.totpSecret === null) throw new GatewayError('conflict', 'This operator has no second factor to reset.');
    const before = operatorJson(operator, user);
    await resetSecondFactor(deps, user.id);
    const after = { ...(await described(operator)), identity_check: input.identity_check };
    await audit(request, 'reset operator two-factor', user.id, 200, before, after);
    sendJson(request.context, 200, after);
  } },

  { method: 'DELETE', path: '/api/operator/operators/:id', who: 'operator', permission: 'operators:manage', handler: ({ storage, otherOperator, audit }) => async (request) => {
    const before = await otherOperator(request, 'You cannot remove yourself; another owner can.');
    if (!(await storage.operators.remove(before.userId))) throw new GatewayError('not_found', `No operator with user id '${before.userId}'.`);
    await audit(request, 'remove operator', before.userId, 204, before, null);
    sendNoContent(request.context);
  } },
]);
