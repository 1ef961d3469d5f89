import { z } from 'zod';
import type { UserStandingJson, UserStandingListJson } from '../../contract/operator.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import { isoTime } from '../../management/time-input.js';
import type { ConsoleUser } from '../../storage/repositories/console-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { recordAudit } from './audit-log.js';
import { operatorAllows } from './operator-roles.js';
import { type OperatorRequest } from './operator-route.js';
import { identityCheckSchema, resetSecondFactor } from './second-factor-reset.js';
import { consoleRoutes } from '../console-route-table.js';

const lockSchema = z.object({ reason: z.string().trim().min(3).max(500) }).strict();

/** The sign-in status of console users: find by email, lock and unlock, reset the second factor. */
export const USER_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;

  const statusJson = async (user: ConsoleUser): Promise<UserStandingJson> => {
    const [lock, memberships, sessions, operator] = await Promise.all([
      storage.operators.getLock(user.id), storage.console.listMemberships(user.id), storage.console.listSessions(user.id, clock.now()), storage.operators.get(user.id),
    ]);
    return {
      id: user.id,
      email: user.email,
      email_verified: user.emailVerifiedAt !== null,
      two_factor_enabled: user.totpSecret !== null,
      locked: lock === null ? null : { reason: lock.reason, locked_by: lock.lockedBy, locked_at: isoTime(lock.lockedAt) },
      memberships: memberships.map((membership) => ({ account_id: membership.accountId, role: membership.role })),
      active_sessions: sessions.length,
      operator_role: operator?.role ?? null,
      created_at: isoTime(user.createdAt),
    };
  };

  const userById = async (id: string): Promise<ConsoleUser> => {
    const user = await storage.console.getUserById(id);
    if (user === null) throw new GatewayError('not_found', `No console user with id '${id}'.`);
    return user;
  };

  /** Locking or unlocking an operator and resetting their second factor are an owner's decisions, as on the operators page. */
  const assertMayActOn = async (request: OperatorRequest, user: ConsoleUser): Promise<void> => {
    if (!operatorAllows(request.operator.role, 'operators:manage') && (await storage.operators.get(user.id)) !== null) {
      throw new GatewayError('forbidden', 'This user is an operator: only an owner may lock or unlock them or reset their second factor.');
    }
  };

  const audit = (request: OperatorRequest, action: string, user: ConsoleUser, before: unknown, after: unknown) => recordAudit(deps, {
    operatorId: request.operator.userId, operatorEmail: request.active.user.email, action, target: `user:${user.id}`, status: 200, before, after, ip: request.context.clientIp,
  });
  return { deps, storage, clock, statusJson, userById, assertMayActOn, audit };
}, [
  { method: 'GET', path: '/api/operator/users', who: 'operator', permission: 'read', handler: ({ storage, statusJson }) => async ({ context }) => {
    const email = (context.query.get('email') ?? '').trim().toLowerCase();
    if (email === '') throw new GatewayError('bad_request', "'email' is required.", { param: 'email' });
    const user = await storage.console.getUserByEmail(email);
    sendJson(context, 200, { data: user === null ? [] : [await statusJson(user)] } satisfies UserStandingListJson);
  } },

  { method: 'POST', path: '/api/operator/users/:id/lock', who: 'operator', permission: 'write', handler: ({ storage, clock, statusJson, userById, assertMayActOn, audit }) => async (request) => {
    const input = parseInput(lockSchema, await readConsoleBody(request.context));
    const user = await userById(request.context.params.id ?? '');
    if (user.id === request.operator.userId) throw new GatewayError('conflict', 'You cannot lock yourself out.');
    await assertMayActOn(request, user);
    const before = await statusJson(user);
    await storage.operators.lock({ userId: user.id, reason: input.reason, lockedBy: request.operator.userId, lockedAt: clock.now() });
    await storage.console.deleteUserSessions(user.id, null);
    const after = await statusJson(user);
    await audit(request, 'lock console user', user, before, after);
    sendJson(request.context, 200, after);
  } },

  { method: 'POST', path: '/api/operator/users/:id/unlock', who: 'operator', permission: 'write', handler: ({ storage, statusJson, userById, assertMayActOn, audit }) => async (request) => {
    const user = await userById(request.context.params.id ?? '');
    await assertMayActOn(request, user);
    const before = await statusJson(user);
    await storage.operators.unlock(user.id);
    const after = await statusJson(user);
    await audit(request, 'unlock console user', user, before, after);
    sendJson(request.context, 200, after);
  } },

  { method: 'POST', path: '/api/operator/users/:id/reset-two-factor', who: 'operator', permission: 'write', handler: ({ deps, storage, statusJson, userById, assertMayActOn, audit }) => async (request) => {
    const input = parseInput(identityCheckSchema, await readConsoleBody(request.context));
    const user = await userById(request.context.params.id ?? '');
    await assertMayActOn(request, user);
    if (user.totpSecret === null) throw new GatewayError('conflict', 'This user has no second factor to reset.');
    const before = await statusJson(user);
    await resetSecondFactor(deps, user.id);
    const after = { ...(await statusJson((await storage.console.getUserById(user.id)) ?? user)), identity_check: input.identity_check };
    await audit(request, 'reset two-factor', user, before, after);
    sendJson(request.context, 200, after);
  } },
]);
