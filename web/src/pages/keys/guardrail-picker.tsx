import type { OfferedGuardrail } from '../../api/types';

const GUARDRAIL_KINDS: Record<string, string> = { pii: 'personal data', deny_list: 'deny list and limits', moderation: 'moderation model', webhook: 'external check' };
const GUARDRAIL_MODES: Record<string, string> = { block: 'refuses', mask: 'masks', log: 'logs only' };
const GUARDRAIL_DIRECTIONS: Record<string, string> = { input: 'prompts', output: 'answers', both: 'prompts and answers' };

/** What a policy does, in words: "personal data: masks prompts and answers". */
export function guardrailSummary(policy: OfferedGuardrail): string {
  return `${GUARDRAIL_KINDS[policy.kind] ?? policy.kind}: ${GUARDRAIL_MODES[policy.mode] ?? policy.mode}, ${GUARDRAIL_DIRECTIONS[policy.applies_to] ?? policy.applies_to}`;
}

interface GuardrailPickerProps {
  /** The policies the operator lets accounts attach. */
  offered: OfferedGuardrail[];
  /** The names bound when the form opened (the operator's own among them stay). */
  initial: readonly string[];
  chosen: string[];
  onChange: (chosen: string[]) => void;
  /** What the policies check, in one sentence. */
  hint: string;
  /** The fieldset's legend ("Guardrails" unless a heading above says that already). */
  legend?: string;
}

/**
 * The guardrail policies of a key or project: a checkbox per policy the account may use, and the operator's own
 * (shown, kept, not changeable here). Nothing when there is neither.
 */
export function GuardrailPicker({ offered, initial, chosen, onChange, hint, legend = 'Guardrails' }: GuardrailPickerProps) {
  const offeredNames = new Set(offered.map((policy) => policy.name));
  const operatorGuardrails = initial.filter((name) => !offeredNames.has(name));
  if (offered.length === 0 && operatorGuardrails.length === 0) return null;
  const toggle = (name: string, checked: boolean) => onChange(checked ? [...chosen, name] : chosen.filter((other) => other !== name));
  return (
    <fieldset>
      <legend>{legend}</legend>
      <p className="field-hint">{hint}</p>
      <div className="model-picker" role="group" aria-label="Guardrail policies">
        {offered.map((policy) => (
          <label key={policy.name} className="checkbox-row">
            <input type="checkbox" checked={chosen.includes(policy.name)} onChange={(event) => toggle(policy.name, event.target.checked)} />
            <span><span className="mono">{policy.name}</span> <span className="key-meta">{guardrailSummary(policy)}</span></span>
          </label>
        ))}
        {operatorGuardrails.map((name) => (
          <label key={name} className="checkbox-row">
            <input type="checkbox" checked disabled />
            <span><span className="mono">{name}</span> <span className="key-meta">set by the operator</span></span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
