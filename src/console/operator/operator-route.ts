import { GatewayError } from '../../errors/gateway-error.js';
import type { RequestContext, RouteHandler } from '../../http/request-context.js';
import type { ConsoleOperator } from '../../storage/repositories/operator-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { signedInRoute } from '../console-route.js';
import type { ActiveSession } from '../session-store.js';
import { operatorAllows, type OperatorPermission } from './operator-roles.js';
import type { OperatorStandingJson } from '../../contract/account.js';
import { signedInAsOperatorBySso } from '../sso/password-sign-in.js';

export interface OperatorRequest {
  context: RequestContext;
  active: ActiveSession;
  operator: ConsoleOperator;
}

const PERMISSIONS: readonly OperatorPermission[] = ['read', 'write', 'support:reply', 'operators:manage'];

/** What an operator's role lets them do, for the console to show or hide what the server would refuse anyway. */
export function permissionsOf(operator: ConsoleOperator): OperatorPermission[] {
  return operator.disabledAt === null ? PERMISSIONS.filter((permission) => operatorAllows(operator.role, permission)) : [];
}

/**
 * The signed-in user's operator standing as the console's session answer carries it, or null for everyone who is not
 * an operator: one call that answers 200 for every user tells the console which pages to show.
 */
export async function operatorStanding(deps: ConsoleDeps, active: ActiveSession): Promise<OperatorStandingJson | null> {
  const operator = await deps.services.storage.operators.get(active.user.id);
  if (operator === null) return null;
  return { role: operator.role, disabled: operator.disabledAt !== null, two_factor_required: await secondFactorMissing(deps, active), permissions: permissionsOf(operator) };
}

/**
 * Whether the operator still has to turn on the console's second factor: a session signed in through the operators'
 * identity provider has passed that provider's checks instead.
 */
export async function secondFactorMissing(deps: ConsoleDeps, active: ActiveSession): Promise<boolean> {
  return active.user.totpSecret === null && !(await signedInAsOperatorBySso(deps, active.session.ssoConnectionId));
}

/** The signed-in user's operator record, or 403: not an operator, or disabled by an owner. */
export async function activeOperator(deps: ConsoleDeps, active: ActiveSession): Promise<ConsoleOperator> {
  const operator = await deps.services.storage.operators.get(active.user.id);
  if (operator === null) throw new GatewayError('not_operator', 'This user is not an operator of the gateway.');
  if (operator.disabledAt !== null) throw new GatewayError('operator_disabled', 'An owner disabled your operator access; ask an owner of the gateway to enable it.');
  return operator;
}

/**
 * The signed-in user's operator record, or 403: not an operator, disabled, or without a second factor. A session
 * signed in through the operators' identity provider has passed that provider's checks instead.
 */
export async function requireOperator(deps: ConsoleDeps, active: ActiveSession): Promise<ConsoleOperator> {
  const operator = await activeOperator(deps, active);
  if (await secondFactorMissing(deps, active)) {
    throw new GatewayError('two_factor_required', 'Operators must turn on two-factor authentication (Security page) before using the operator console.');
  }
  return operator;
}

/**
 * A route for operators: a console session (CSRF checked on changes), an operator role that allows `permission`,
 * or a function of the request deciding it, and a second factor.
 */
export function operatorRoute(
  deps: ConsoleDeps,
  permission: OperatorPermission | ((context: RequestContext) => OperatorPermission),
  handler: (request: OperatorRequest) => Promise<void>,
): RouteHandler {
  return signedInRoute(deps, null, async ({ context, active }) => {
    const operator = await requireOperator(deps, active);
    const needed = typeof permission === 'function' ? permission(context) : permission;
    if (!operatorAllows(operator.role, needed)) {
      throw new GatewayError('forbidden', `Your operator role (${operator.role}) does not allow this.`);
    }
    await handler({ context, active, operator });
  });
}
