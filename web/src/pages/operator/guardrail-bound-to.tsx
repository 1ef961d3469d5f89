import type { GuardrailPolicy } from '../../api/operator-types';

type Binding = NonNullable<GuardrailPolicy['bound_to']>[number];

/** The scopes in the order a policy applies them, widest first, with their names one and many. */
const SCOPES: { scope: Binding['scope']; one: string; many: string }[] = [
  { scope: 'model', one: 'model', many: 'models' },
  { scope: 'account', one: 'account', many: 'accounts' },
  { scope: 'project', one: 'project', many: 'projects' },
  { scope: 'key', one: 'key', many: 'keys' },
];

/** Names shown per scope before the rest are counted. */
const SHOWN_PER_SCOPE = 5;

/** What an operator knows a target by: a model's id, an account's email, a project's or key's name and its account. */
function labelOf(binding: Binding): string {
  const name = binding.name ?? `${binding.id} (gone)`;
  if (binding.scope !== 'project' && binding.scope !== 'key') return name;
  return `${name} · ${binding.account_email ?? binding.account_id ?? 'no account'}`;
}

/** Every binding of a policy, grouped by scope (models, accounts, projects, keys), each scope counted. */
export function GuardrailBoundTo({ policy }: { policy: GuardrailPolicy }) {
  const bound = policy.bound_to ?? [];
  if (bound.length === 0) return <span className="key-meta">Not bound</span>;
  return (
    <ul className="plain-list">
      {SCOPES.map(({ scope, one, many }) => {
        const here = bound.filter((binding) => binding.scope === scope);
        if (here.length === 0) return null;
        const rest = here.length - SHOWN_PER_SCOPE;
        return (
          <li key={scope} data-bound-scope={scope}>
            <span className="key-meta">{here.length} {here.length === 1 ? one : many}:</span>{' '}
            {here.slice(0, SHOWN_PER_SCOPE).map((binding, index) => (
              <span key={binding.id}>
                {index > 0 ? ', ' : ''}
                <span className="mono wrap-anywhere" title={binding.id}>{labelOf(binding)}</span>
              </span>
            ))}
            {rest > 0 ? <span className="key-meta"> and {rest} more</span> : null}
          </li>
        );
      })}
    </ul>
  );
}
