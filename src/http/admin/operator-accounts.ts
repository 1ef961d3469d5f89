import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import type { RequestContext } from '../request-context.js';

/**
 * An account an operator belongs to reaches that operator: disabling it ends their console sessions and refuses
 * their sign-in, deleting it erases their login when it is their only account. So the protections operators have
 * hold on this path too. Through the operator console, only an owner of the gateway (whose role manages operators)
 * may disable, enable or delete such an account, as only an owner may lock an operator; and no operator does it to
 * their own account. Deleting the only account of an operator, which would leave their role on a login that no
 * longer exists, is refused to everyone until their role is removed.
 */
export async function guardOperatorsOfAccount(services: Pick<GatewayServices, 'storage'>, context: RequestContext, accountId: string, change: 'status' | 'delete'): Promise<void> {
  const operators = await services.storage.operators.operatorsAmongMembers(accountId);
  if (operators.length === 0) return;
  const caller = context.operator;
  if (caller !== undefined) {
    if (operators.some(({ operator }) => operator.userId === caller.userId)) {
      throw new GatewayError('conflict', 'This is an account you belong to: you cannot disable, enable or delete it from the operator console.');
    }
    if (!caller.managesOperators) {
      throw new GatewayError('forbidden', 'An operator of the gateway belongs to this account: only an owner of the gateway may disable, enable or delete it.');
    }
  }
  if (change === 'delete') {
    const erased = operators.filter(({ onlyMembership }) => onlyMembership).map(({ operator }) => operator.userId);
    if (erased.length > 0) {
      throw new GatewayError('conflict', `Deleting this account would erase the console login of operator ${erased.join(', ')}: remove their operator role first.`);
    }
  }
}
