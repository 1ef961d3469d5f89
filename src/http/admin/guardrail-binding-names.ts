import type { GuardrailBinding } from '../../domain/guardrail-records.js';
import type { Storage } from '../../storage/storage.js';

/** A binding as the admin API shows it: its target's id and the names an operator knows it by. */
export interface NamedBinding {
  scope: GuardrailBinding['scope'];
  id: string;
  name: string | null;
  account_id?: string;
  account_email?: string | null;
}

/** What names a policy's target: a binding, or an account's override of the policy. */
export interface PolicyTarget {
  scope: GuardrailBinding['scope'];
  targetId: string;
}

/** The ids of the targets of one scope. */
function targetsOf(bindings: readonly PolicyTarget[], scope: GuardrailBinding['scope']): string[] {
  return bindings.filter((binding) => binding.scope === scope).map((binding) => binding.targetId);
}

/**
 * The bindings (or overrides) with their targets named: a model by its id, an account by its email, a project and a key by their
 * names and their account's email (null where the target is gone, or the account deleted). The targets are read in
 * batches, however many policies bind however many of them: the projects and keys together, then their accounts.
 */
export async function nameBindings<Target extends PolicyTarget>(storage: Pick<Storage, 'accounts' | 'keys' | 'projects'>, bindings: readonly Target[]): Promise<Map<Target, NamedBinding>> {
  const [projects, keys] = await Promise.all([storage.projects.getByIds(targetsOf(bindings, 'project')), storage.keys.getByIds(targetsOf(bindings, 'key'))]);
  const owners = new Map<string, { name: string; accountId: string }>();
  for (const project of projects) owners.set(`project\u0000${project.id}`, project);
  for (const key of keys) owners.set(`key\u0000${key.id}`, key);
  const accountIds = [...targetsOf(bindings, 'account'), ...[...owners.values()].map((owner) => owner.accountId)];
  const emails = new Map((await storage.accounts.getByIds(accountIds)).map((account) => [account.id, account.deletedAt === null ? account.email : null]));
  const email = (accountId: string): string | null => emails.get(accountId) ?? null;
  return new Map(bindings.map((binding): [Target, NamedBinding] => {
    const base = { scope: binding.scope, id: binding.targetId };
    switch (binding.scope) {
      case 'model':
        return [binding, { ...base, name: binding.targetId }];
      case 'account':
        return [binding, { ...base, name: email(binding.targetId) }];
      case 'project':
      case 'key': {
        const owner = owners.get(`${binding.scope}\u0000${binding.targetId}`);
        return [binding, owner === undefined ? { ...base, name: null } : { ...base, name: owner.name, account_id: owner.accountId, account_email: email(owner.accountId) }];
      }
      default: {
        const unknown: never = binding.scope;
        throw new Error(`unknown guardrail binding scope ${String(unknown)}`);
      }
    }
  }));
}
