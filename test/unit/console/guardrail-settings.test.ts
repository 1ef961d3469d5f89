/**
 * The operator console's guardrail settings form against the server's settings schemas: every kind's stored settings
 * come back unchanged through the form's fields, what the form sends is what the admin API accepts, the browser's own
 * checks catch what they claim to, and a server error naming a setting lands on its field.
 */
import { describe, expect, it } from 'vitest';
import { PII_KINDS } from '../../../src/guardrails/detectors.js';
import { GUARDRAIL_KINDS, guardrailInputSchema } from '../../../src/guardrails/settings.js';
import { PII_DETECTORS, settingsDraftOf, settingsErrorOf, settingsOf, type GuardrailKind } from '../../../web/src/pages/operator/guardrail-settings.js';

const STORED: Record<GuardrailKind, Record<string, unknown>> = {
  pii: { detectors: ['card', 'iban'], reversible: true },
  deny_list: {
    words: ['zanzibar', 'project heron'], patterns: ['order-\\d{6}', 'ticket #\\d{1,8}'], max_match_chars: 80, max_prompt_chars: 20000,
    max_tool_name_chars: 64, denied_tools: ['shell', 'exec'], tool_result_injection: true, injection_threshold: 5,
  },
  moderation: { model: 'omni-moderation-latest', categories: ['violence', 'self-harm/intent'], threshold: 0.4, billed_to: 'operator', operator_key_id: 'key_1', timeout_ms: 2000, fail_open: true },
  webhook: { url: 'https://guard.example.com/check', timeout_ms: 1500, fail_open: false },
};

const accepted = (kind: GuardrailKind, settings: Record<string, unknown>) =>
  guardrailInputSchema.safeParse({ name: 'p', kind, mode: kind === 'pii' ? 'mask' : 'block', applies_to: 'both', settings });

describe('guardrail settings form', () => {
  it('offers the server\'s kinds and detectors, no more and no fewer', () => {
    expect(PII_DETECTORS.map((detector) => detector.value)).toEqual([...PII_KINDS]);
    expect(Object.keys(STORED).sort()).toEqual([...GUARDRAIL_KINDS].sort());
  });

  it.each(Object.keys(STORED) as GuardrailKind[])('keeps %s settings as stored, in a shape the admin API accepts', (kind) => {
    const parsed = settingsOf(kind, settingsDraftOf(kind, STORED[kind]));
    expect(parsed).toEqual({ settings: STORED[kind] });
    expect(accepted(kind, (parsed as { settings: Record<string, unknown> }).settings).success).toBe(true);
  });

  it.each(Object.keys(STORED) as GuardrailKind[])('starts a new %s policy with settings the admin API accepts once required fields are filled', (kind) => {
    const draft = settingsDraftOf(kind, null);
    if (kind === 'webhook') draft.url = 'https://guard.example.com/check';
    const parsed = settingsOf(kind, draft);
    expect('settings' in parsed).toBe(true);
    expect(accepted(kind, (parsed as { settings: Record<string, unknown> }).settings).success).toBe(true);
  });

  it('sends every detector as none named (all, later ones too), and refuses none chosen', () => {
    expect(settingsOf('pii', settingsDraftOf('pii', {}))).toEqual({ settings: {} });
    const none = { ...settingsDraftOf('pii', {}), detectors: [] };
    expect(settingsOf('pii', none)).toEqual({ errors: { detectors: 'Choose at least one detector.' } });
  });

  it('catches what it can in the browser: a pattern that does not compile, numbers, a missing address or operator key', () => {
    const patterns = { ...settingsDraftOf('deny_list', {}), patterns: 'fine\n(unclosed' };
    expect((settingsOf('deny_list', patterns) as { errors: Record<string, string> }).errors.patterns).toMatch(/^Line 2 is not a valid regular expression/);
    const numbers = { ...settingsDraftOf('deny_list', {}), maxPromptChars: '1.5', maxToolNameChars: '0' };
    expect(Object.keys((settingsOf('deny_list', numbers) as { errors: object }).errors)).toEqual(['maxPromptChars', 'maxToolNameChars']);
    expect((settingsOf('webhook', settingsDraftOf('webhook', null)) as { errors: object }).errors).toHaveProperty('url');
    const operator = { ...settingsDraftOf('moderation', null), billedTo: 'operator' as const, threshold: '2' };
    expect(Object.keys((settingsOf('moderation', operator) as { errors: object }).errors).sort()).toEqual(['operatorKeyId', 'threshold']);
  });

  it('keeps, replaces or removes a webhook\'s sealed headers', () => {
    const stored = settingsDraftOf('webhook', STORED.webhook, ['X-Api-Key']);
    expect(stored.headersAction).toBe('keep');
    expect(settingsOf('webhook', stored)).toEqual({ settings: STORED.webhook });
    expect(settingsOf('webhook', { ...stored, headersAction: 'remove' })).toEqual({ settings: { ...STORED.webhook, headers: {} } });
    const replaced = settingsOf('webhook', { ...stored, headersAction: 'replace', headers: [{ name: 'Authorization', value: 'Bearer s' }] });
    expect(replaced).toEqual({ settings: { ...STORED.webhook, headers: { Authorization: 'Bearer s' } } });
    expect(accepted('webhook', (replaced as { settings: Record<string, unknown> }).settings).success).toBe(true);
    expect(settingsOf('webhook', { ...stored, headersAction: 'replace', headers: [{ name: '', value: 'x' }] })).toEqual({ errors: { headers: 'Every header needs a name.' } });
  });

  it('puts the server\'s error on the field it names, a list item by its line', () => {
    expect(settingsErrorOf('settings.patterns.1', "'settings.patterns.1': pattern uses a back-reference")).toEqual({ field: 'patterns', message: 'Line 2: pattern uses a back-reference' });
    expect(settingsErrorOf('settings.url', "'settings.url': must carry no user name")).toEqual({ field: 'url', message: 'must carry no user name' });
    expect(settingsErrorOf('settings.operator_key_id', 'x')).toEqual({ field: 'operatorKeyId', message: 'x' });
    expect(settingsErrorOf('name', 'x')).toBeNull();
    expect(settingsErrorOf(null, 'x')).toBeNull();
  });
});
