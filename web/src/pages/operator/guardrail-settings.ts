/**
 * A guardrail policy's settings as form fields, per kind, and back: what the admin API's settings schema of each kind
 * accepts (src/guardrails/settings.ts). The browser checks what it can say clearly (required fields, whole numbers,
 * regular expressions that do not compile); the server's validation decides, and its error names the field.
 */

/** The kinds of the admin API's guardrail policies (GuardrailPolicy['kind'], which the page passes in). */
export type GuardrailKind = 'pii' | 'deny_list' | 'moderation' | 'webhook';

export const PII_DETECTORS = [
  { value: 'email', label: 'Email addresses' },
  { value: 'phone', label: 'Phone numbers' },
  { value: 'card', label: 'Payment cards (Luhn-checked)' },
  { value: 'iban', label: 'IBANs' },
  { value: 'national_id', label: 'National ids' },
  { value: 'ip_address', label: 'IP addresses' },
  { value: 'secret', label: 'Secrets and API keys' },
] as const;

export interface HeaderRow { name: string; value: string }

/** Every kind's fields as the form edits them (text as typed); only the chosen kind's are sent. */
export interface SettingsDraft {
  detectors: string[];
  reversible: boolean;
  words: string;
  patterns: string;
  maxMatchChars: string;
  maxPromptChars: string;
  maxToolNameChars: string;
  deniedTools: string;
  toolResultInjection: boolean;
  injectionThreshold: string;
  model: string;
  categories: string;
  threshold: string;
  billedTo: 'account' | 'operator';
  operatorKeyId: string;
  timeoutMs: string;
  failOpen: boolean;
  url: string;
  /** A webhook's sealed headers: kept as they are, replaced by `headers`, or removed. */
  headersAction: 'keep' | 'replace' | 'remove';
  headers: HeaderRow[];
  /** Whether the policy has sealed headers now (none given then removes them; otherwise none is sent). */
  sealedHeaders: boolean;
}

export type SettingsField = keyof SettingsDraft;
export type SettingsErrors = Partial<Record<SettingsField, string>>;

/** The settings' JSON names and the form's fields. */
const FIELD_OF: Record<string, SettingsField> = {
  detectors: 'detectors', reversible: 'reversible', words: 'words', patterns: 'patterns', max_match_chars: 'maxMatchChars',
  max_prompt_chars: 'maxPromptChars', max_tool_name_chars: 'maxToolNameChars', denied_tools: 'deniedTools',
  tool_result_injection: 'toolResultInjection', injection_threshold: 'injectionThreshold', model: 'model', categories: 'categories',
  threshold: 'threshold', billed_to: 'billedTo', operator_key_id: 'operatorKeyId', timeout_ms: 'timeoutMs', fail_open: 'failOpen',
  url: 'url', headers: 'headers',
};

const text = (value: unknown): string => (typeof value === 'number' || typeof value === 'string' ? String(value) : '');
const lines = (value: unknown): string => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string').join('\n') : '');

/**
 * The form's fields for a kind, from the policy's stored settings (or the kind's starting point for a new one) and
 * the names of its sealed headers.
 */
export function settingsDraftOf(kind: GuardrailKind, settings: Record<string, unknown> | null, headerNames: readonly string[] = []): SettingsDraft {
  const stored = settings ?? {};
  const detectors = Array.isArray(stored.detectors) ? stored.detectors.filter((item): item is string => typeof item === 'string') : PII_DETECTORS.map((detector) => detector.value);
  return {
    detectors,
    reversible: stored.reversible === true,
    words: lines(stored.words),
    patterns: lines(stored.patterns),
    maxMatchChars: text(stored.max_match_chars),
    maxPromptChars: text(stored.max_prompt_chars),
    maxToolNameChars: text(stored.max_tool_name_chars),
    deniedTools: lines(stored.denied_tools),
    toolResultInjection: stored.tool_result_injection === true,
    injectionThreshold: text(stored.injection_threshold),
    model: settings === null && kind === 'moderation' ? 'omni-moderation-latest' : text(stored.model),
    categories: Array.isArray(stored.categories) ? stored.categories.join(', ') : '',
    threshold: text(stored.threshold),
    billedTo: stored.billed_to === 'operator' ? 'operator' : 'account',
    operatorKeyId: text(stored.operator_key_id),
    timeoutMs: text(stored.timeout_ms),
    failOpen: stored.fail_open === true,
    url: text(stored.url),
    headersAction: headerNames.length > 0 ? 'keep' : 'replace',
    headers: [],
    sealedHeaders: headerNames.length > 0,
  };
}

/** Non-empty lines, as typed (a pattern's spaces count; a line's end does not). */
const listOf = (value: string): string[] => value.split('\n').map((line) => line.replace(/\r$/, '')).filter((line) => line.trim() !== '');

/** Settings of the kind from the form, or the fields' problems. */
export function settingsOf(kind: GuardrailKind, draft: SettingsDraft): { settings: Record<string, unknown> } | { errors: SettingsErrors } {
  const errors: SettingsErrors = {};
  const settings: Record<string, unknown> = {};
  const whole = (field: SettingsField, key: string, value: string, min: number) => {
    if (value.trim() === '') return;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min) errors[field] = `Enter a whole number of at least ${min}, or leave it empty.`;
    else settings[key] = parsed;
  };
  if (kind === 'pii') {
    if (draft.detectors.length === 0) errors.detectors = 'Choose at least one detector.';
    // Every detector chosen: left out, so detectors added later run too.
    else if (draft.detectors.length < PII_DETECTORS.length) settings.detectors = PII_DETECTORS.map((detector) => detector.value).filter((value) => draft.detectors.includes(value));
    if (draft.reversible) settings.reversible = true;
  } else if (kind === 'deny_list') {
    const words = listOf(draft.words).map((word) => word.trim());
    if (words.length > 0) settings.words = words;
    const patterns = listOf(draft.patterns);
    for (const [index, pattern] of patterns.entries()) {
      try {
        new RegExp(pattern, 'iu');
      } catch (error) {
        errors.patterns = `Line ${index + 1} is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`;
        break;
      }
    }
    if (patterns.length > 0) settings.patterns = patterns;
    whole('maxMatchChars', 'max_match_chars', draft.maxMatchChars, 1);
    whole('maxPromptChars', 'max_prompt_chars', draft.maxPromptChars, 1);
    whole('maxToolNameChars', 'max_tool_name_chars', draft.maxToolNameChars, 1);
    const deniedTools = listOf(draft.deniedTools).map((tool) => tool.trim());
    if (deniedTools.length > 0) settings.denied_tools = deniedTools;
    if (draft.toolResultInjection) settings.tool_result_injection = true;
    whole('injectionThreshold', 'injection_threshold', draft.injectionThreshold, 1);
  } else if (kind === 'moderation') {
    if (draft.model.trim() !== '') settings.model = draft.model.trim();
    const categories = draft.categories.split(/[\s,]+/).filter((category) => category !== '');
    if (categories.length > 0) settings.categories = categories;
    if (draft.threshold.trim() !== '') {
      const threshold = Number(draft.threshold);
      if (!Number.isFinite(threshold) || threshold < 0 || threshold > 1) errors.threshold = 'Enter a score from 0 to 1, or leave it empty to follow the model\'s flags.';
      else settings.threshold = threshold;
    }
    settings.billed_to = draft.billedTo;
    if (draft.billedTo === 'operator') {
      if (draft.operatorKeyId.trim() === '') errors.operatorKeyId = 'Name the key (its id) the operator\'s moderation calls are made and billed as.';
      else settings.operator_key_id = draft.operatorKeyId.trim();
    }
    whole('timeoutMs', 'timeout_ms', draft.timeoutMs, 1);
    settings.fail_open = draft.failOpen;
  } else {
    if (draft.url.trim() === '') errors.url = 'Enter the guardrail service\'s address (https://…).';
    else settings.url = draft.url.trim();
    whole('timeoutMs', 'timeout_ms', draft.timeoutMs, 1);
    settings.fail_open = draft.failOpen;
    if (draft.headersAction === 'remove') settings.headers = {};
    if (draft.headersAction === 'replace') {
      const rows = draft.headers.filter((row) => row.name.trim() !== '' || row.value !== '');
      const headers: Record<string, string> = {};
      for (const row of rows) {
        if (row.name.trim() === '') errors.headers = 'Every header needs a name.';
        else if (Object.hasOwn(headers, row.name.trim())) errors.headers = `The header ${row.name.trim()} is given twice.`;
        else headers[row.name.trim()] = row.value;
      }
      // None given: a policy with sealed headers has them removed; one without stays without.
      if (rows.length > 0 || draft.sealedHeaders) settings.headers = headers;
    }
  }
  return Object.keys(errors).length > 0 ? { errors } : { settings };
}

/**
 * The field a server error names (`settings.patterns.2` is the third pattern's line), with its message; null when the
 * error is not about one setting.
 */
export function settingsErrorOf(param: string | null, message: string): { field: SettingsField; message: string } | null {
  if (param === null || !param.startsWith('settings.')) return null;
  const [, key = '', index] = param.split('.');
  const field = FIELD_OF[key];
  if (field === undefined) return null;
  // The server's message starts with the field's path, which the form shows by where the error is.
  const said = message.startsWith(`'${param}': `) ? message.slice(param.length + 4) : message;
  const line = index !== undefined && /^\d+$/.test(index) && (field === 'patterns' || field === 'words' || field === 'deniedTools') ? `Line ${Number(index) + 1}: ` : '';
  return { field, message: `${line}${said}` };
}
