/**
 * The rule of account overrides: an account may only make an operator policy milder where it applies to it, and only
 * as far as the policy's `accounts_may_override` allows. Checked when an override is written and again each time
 * the policies of a request are resolved, so an operator who withdraws the allowance (or changes the policy so the
 * override no longer makes it milder) stops the override at once: it is kept, shown as not applied, and ignored.
 */
import type { GuardrailOverrideMode, GuardrailOverrideRule, GuardrailRecord } from '../domain/guardrail-records.js';

/** How much a mode does: an override must name one that does less than the operator's. */
const STRENGTH: Readonly<Record<string, number>> = { off: 0, log: 1, mask: 2, block: 3 };

/** Kinds that answer a verdict (moderation, webhook) cannot mask, so they cannot be relaxed to masking. */
const CAN_MASK: ReadonlySet<string> = new Set(['pii', 'deny_list']);

export function overrideRuleOf(record: Pick<GuardrailRecord, 'accounts_may_override'>): GuardrailOverrideRule {
  return record.accounts_may_override ?? 'none';
}

/** Null when the policy, as it is now, lets an account set `mode`; otherwise why not (for the account to read). */
export function overrideRefusal(record: Pick<GuardrailRecord, 'name' | 'kind' | 'mode' | 'accounts_may_override'>, mode: GuardrailOverrideMode): string | null {
  const rule = overrideRuleOf(record);
  if (rule === 'none') return `The operator does not let accounts change the guardrail policy '${record.name}'.`;
  if (mode === 'off') return rule === 'disable' ? null : `The operator lets accounts relax '${record.name}' but not turn it off.`;
  if (mode === 'mask' && !CAN_MASK.has(record.kind)) return `A ${record.kind} guardrail answers a verdict: it cannot mask.`;
  if ((STRENGTH[mode] ?? 0) >= (STRENGTH[record.mode] ?? 0)) return `'${mode}' is not milder than the policy's own mode '${record.mode}'.`;
  return null;
}

/** The modes an account may choose for the policy now, mildest first (empty: none). */
export function allowedOverrideModes(record: Pick<GuardrailRecord, 'name' | 'kind' | 'mode' | 'accounts_may_override'>): GuardrailOverrideMode[] {
  return (['off', 'log', 'mask'] as const).filter((mode) => overrideRefusal(record, mode) === null);
}
