import { describe, expect, it } from 'vitest';
import type { GuardrailBinding } from '../../../src/domain/guardrail-records.js';
import type { Storage } from '../../../src/storage/storage.js';
import { nameBindings } from '../../../src/http/admin/guardrail-binding-names.js';

/** Storage that answers batch reads only, counting them: a read per target would throw. */
function countingStorage() {
  const reads: string[] = [];
  const accounts = [
    { id: 'acct_a', email: 'a@example.com', deletedAt: null },
    { id: 'acct_b', email: 'b@example.com', deletedAt: null },
    { id: 'acct_gone', email: 'pseudonym@erased.invalid', deletedAt: 5 },
  ];
  const projects = Array.from({ length: 40 }, (_, i) => ({ id: `proj_${i}`, name: `Project ${i}`, accountId: i % 2 === 0 ? 'acct_a' : 'acct_b' }));
  const keys = Array.from({ length: 40 }, (_, i) => ({ id: `key_${i}`, name: `Key ${i}`, accountId: i === 0 ? 'acct_gone' : 'acct_b' }));
  const batch = <T extends { id: string }>(name: string, rows: readonly T[]) => async (ids: readonly string[]) => {
    reads.push(name);
    return rows.filter((row) => ids.includes(row.id));
  };
  const single = () => { throw new Error('read one at a time'); };
  const storage = {
    accounts: { getByIds: batch('accounts', accounts), getById: single },
    projects: { getByIds: batch('projects', projects), getById: single },
    keys: { getByIds: batch('keys', keys), getById: single },
  } as unknown as Pick<Storage, 'accounts' | 'keys' | 'projects'>;
  return { storage, reads };
}

describe('naming guardrail bindings for the admin API', () => {
  it('reads projects, keys and their accounts in one batch each, however many are bound', async () => {
    const { storage, reads } = countingStorage();
    const bindings: GuardrailBinding[] = [
      { scope: 'model', targetId: 'chat-openai', names: ['p'] },
      { scope: 'account', targetId: 'acct_a', names: ['p'] },
      { scope: 'account', targetId: 'acct_missing', names: ['p'] },
      ...Array.from({ length: 40 }, (_, i): GuardrailBinding => ({ scope: 'project', targetId: `proj_${i}`, names: ['p'] })),
      ...Array.from({ length: 40 }, (_, i): GuardrailBinding => ({ scope: 'key', targetId: `key_${i}`, names: ['p'] })),
      { scope: 'key', targetId: 'key_missing', names: ['p'] },
    ];
    const named = await nameBindings(storage, bindings);
    expect(reads.sort()).toEqual(['accounts', 'keys', 'projects']);
    const shown = bindings.map((binding) => named.get(binding));
    expect(shown[0]).toEqual({ scope: 'model', id: 'chat-openai', name: 'chat-openai' });
    expect(shown[1]).toEqual({ scope: 'account', id: 'acct_a', name: 'a@example.com' });
    expect(shown[2]).toEqual({ scope: 'account', id: 'acct_missing', name: null });
    expect(shown[4]).toEqual({ scope: 'project', id: 'proj_1', name: 'Project 1', account_id: 'acct_b', account_email: 'b@example.com' });
    // A key of a deleted account: named, its account's email not shown.
    expect(shown[43]).toEqual({ scope: 'key', id: 'key_0', name: 'Key 0', account_id: 'acct_gone', account_email: null });
    expect(shown.at(-1)).toEqual({ scope: 'key', id: 'key_missing', name: null });
  });

});
