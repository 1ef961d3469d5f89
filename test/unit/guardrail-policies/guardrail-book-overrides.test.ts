/**
 * Account overrides in the policy book: the most specific allowed override wins (key, project, account), `off` leaves
 * the policy out, a milder mode replaces the operator's, and an override the policy no longer allows (rule withdrawn,
 * mode not milder, masking on a verdict kind, another account's) is passed over. The rule itself: what each
 * `accounts_may_override` lets an account choose.
 */
import { describe, expect, it } from 'vitest';
import { GuardrailBook, type RequestCaller } from '../../../src/guardrail-policies/guardrail-book.js';
import { allowedOverrideModes, overrideRefusal } from '../../../src/guardrail-policies/override-rules.js';
import type { GuardrailBinding, GuardrailOverride, GuardrailRecord } from '../../../src/domain/guardrail-records.js';
import { LocalInvalidationBus } from '../../../src/invalidation/invalidation-bus.js';
import { ManualClock } from '../../../src/shared/clock.js';

function record(name: string, fields: Partial<GuardrailRecord>): GuardrailRecord {
  return { id: `grd_${name}`, name, kind: 'pii', mode: 'mask', applies_to: 'input', createdAt: 0, updatedAt: 0, ...fields };
}

const caller: RequestCaller = { accountId: 'acc_a', projectId: 'prj_a', keyId: 'key_a' };

async function modesFor(records: GuardrailRecord[], overrides: GuardrailOverride[], bindings: GuardrailBinding[] = [{ scope: 'model', targetId: 'm', names: records.map((r) => r.name) }], who: RequestCaller = caller): Promise<Record<string, string>> {
  const book = new GuardrailBook({ list: async () => records, listBindings: async () => bindings, listOverrides: async () => overrides }, new ManualClock(0), new LocalInvalidationBus());
  const resolved = await book.forRequest('m', who);
  return Object.fromEntries((resolved?.policies ?? []).map((policy) => [policy.name, policy.mode]));
}

const override = (guardrail: string, scope: GuardrailOverride['scope'], targetId: string, mode: GuardrailOverride['mode'], accountId = 'acc_a'): GuardrailOverride =>
  ({ accountId, scope, targetId, guardrailId: `grd_${guardrail}`, mode, setBy: null, updatedAt: 0 });

describe('account overrides in the guardrail book', () => {
  it('leaves out a policy turned off and runs a relaxed one in its milder mode', async () => {
    const records = [record('cards', { accounts_may_override: 'disable' }), record('words', { kind: 'deny_list', mode: 'block', accounts_may_override: 'relax' })];
    expect(await modesFor(records, [])).toEqual({ cards: 'mask', words: 'block' });
    expect(await modesFor(records, [override('cards', 'account', 'acc_a', 'off'), override('words', 'key', 'key_a', 'log')])).toEqual({ words: 'log' });
    // Everything turned off: nothing to run at all.
    const book = new GuardrailBook({ list: async () => records.slice(0, 1), listBindings: async () => [{ scope: 'model', targetId: 'm', names: ['cards'] }], listOverrides: async () => [override('cards', 'account', 'acc_a', 'off')] }, new ManualClock(0), new LocalInvalidationBus());
    expect(await book.forRequest('m', caller)).toBeNull();
  });

  it('takes the most specific override the policy allows', async () => {
    const records = [record('cards', { accounts_may_override: 'disable' })];
    expect(await modesFor(records, [override('cards', 'account', 'acc_a', 'off'), override('cards', 'key', 'key_a', 'log')])).toEqual({ cards: 'log' });
    expect(await modesFor(records, [override('cards', 'account', 'acc_a', 'log'), override('cards', 'project', 'prj_a', 'off')])).toEqual({});
    // Relax only: the key's `off` is passed over, the account's `log` applies.
    const relaxOnly = [record('cards', { accounts_may_override: 'relax' })];
    expect(await modesFor(relaxOnly, [override('cards', 'account', 'acc_a', 'log'), override('cards', 'key', 'key_a', 'off')])).toEqual({ cards: 'log' });
  });

  it('passes over overrides the policy does not allow now, and other accounts\'', async () => {
    expect(await modesFor([record('cards', {})], [override('cards', 'account', 'acc_a', 'off')])).toEqual({ cards: 'mask' });
    expect(await modesFor([record('cards', { accounts_may_override: 'relax' })], [override('cards', 'account', 'acc_a', 'mask')])).toEqual({ cards: 'mask' });
    expect(await modesFor([record('mod', { kind: 'moderation', mode: 'block', accounts_may_override: 'relax' })], [override('mod', 'account', 'acc_a', 'mask')])).toEqual({ mod: 'block' });
    // An override stored for a key id by another account never applies to this caller.
    expect(await modesFor([record('cards', { accounts_may_override: 'disable' })], [override('cards', 'key', 'key_a', 'off', 'acc_b')])).toEqual({ cards: 'mask' });
  });

  it('drops its snapshot on a guardrails change, so a withdrawn allowance stops the override on the next request', async () => {
    const records = [record('cards', { accounts_may_override: 'disable' })];
    const bus = new LocalInvalidationBus();
    const book = new GuardrailBook({ list: async () => records, listBindings: async () => [{ scope: 'model', targetId: 'm', names: ['cards'] }], listOverrides: async () => [override('cards', 'account', 'acc_a', 'off')] }, new ManualClock(0), bus);
    expect(await book.forRequest('m', caller)).toBeNull();
    records[0] = { ...records[0]!, accounts_may_override: 'none' };
    await bus.publish({ kind: 'guardrails' });
    expect((await book.forRequest('m', caller))?.policies.map((policy) => policy.mode)).toEqual(['mask']);
  });
});

describe('the override rule', () => {
  it('lets each allowance choose only milder modes', () => {
    expect(allowedOverrideModes(record('p', { mode: 'block', kind: 'deny_list', accounts_may_override: 'disable' }))).toEqual(['off', 'log', 'mask']);
    expect(allowedOverrideModes(record('p', { mode: 'block', kind: 'deny_list', accounts_may_override: 'relax' }))).toEqual(['log', 'mask']);
    expect(allowedOverrideModes(record('p', { mode: 'block', kind: 'webhook', accounts_may_override: 'relax' }))).toEqual(['log']);
    expect(allowedOverrideModes(record('p', { mode: 'log', accounts_may_override: 'relax' }))).toEqual([]);
    expect(allowedOverrideModes(record('p', { mode: 'log', accounts_may_override: 'disable' }))).toEqual(['off']);
    expect(allowedOverrideModes(record('p', { mode: 'block' }))).toEqual([]);
    expect(overrideRefusal(record('p', { mode: 'mask', accounts_may_override: 'relax' }), 'off')).toContain('not turn it off');
  });
});
