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

/**
 * The bindings with their targets named: a model by its id, an account by its email, a project and a key by their
 * names and their account's email (null where the target is gone). Each target is read once however many policies
 * name it.
 */
export async function nameBindings(storage: Pick<Storage, 'accounts' | 'keys' | 'projects'>, bindings: readonly GuardrailBinding[]): Promise<Map<GuardrailBinding, NamedBinding>> {
  const emails = new Map<string, Promise<string | null>>();
  const email = (accountId: string): Promise<string | null> => {
    let known = emails.get(accountId);
    if (known === undefined) {
      known = storage.accounts.getById(accountId).then((account) => (account === null || account.deletedAt !== null ? null : account.email));
      emails.set(accountId, known);
    }
    return known;
  };
  const owned = async (binding: GuardrailBinding, target: { name: string; accountId: string } | null): Promise<NamedBinding> => (
    target === null
      ? { scope: binding.scope, id: binding.targetId, name: null }
      : { scope: binding.scope, id: binding.targetId, name: target.name, account_id: target.accountId, account_email: await email(target.accountId) }
  );
  const named = await Promise.all(bindings.map(async (binding): Promise<NamedBinding> => {
    switch (binding.scope) {
      case 'model':
        return { scope: binding.scope, id: binding.targetId, name: binding.targetId };
      case 'account':
        return { scope: binding.scope, id: binding.targetId, name: await email(binding.targetId) };
      case 'project':
        return owned(binding, await storage.projects.getById(binding.targetId));
      case 'key':
        return owned(binding, await storage.keys.getById(binding.targetId));
      default: {
        const unknown: never = binding.scope;
        throw new Error(`unknown guardrail binding scope ${String(unknown)}`);
      }
    }
  }));
  return new Map(bindings.map((binding, index) => [binding, named[index] as NamedBinding]));
}
