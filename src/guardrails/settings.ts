/**
 * The operator's guardrail records and the settings each kind accepts, as zod schemas the admin API validates with.
 * Deny-list patterns are checked here, at configuration time, so a pattern that could backtrack catastrophically
 * is refused before it ever runs.
 */
import { z } from 'zod';
import { PII_KINDS } from './detectors.js';
import { MAX_WORD_LENGTH, patternProblem } from './deny-list.js';

export const GUARDRAIL_KINDS = ['pii', 'deny_list', 'moderation', 'webhook'] as const;
export const GUARDRAIL_MODES = ['block', 'mask', 'log'] as const;
export const GUARDRAIL_APPLIES_TO = ['input', 'output', 'both'] as const;

export const piiSettingsSchema = z
  .object({
    /** the detectors to run; all when absent */
    detectors: z.array(z.enum(PII_KINDS)).min(1).optional(),
    /** mask mode: numbered placeholders restored in the answer, instead of `[KIND]` */
    reversible: z.boolean().optional(),
  })
  .strict();

const pattern = z
  .string()
  .superRefine((value, ctx) => {
    const problem = patternProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `pattern ${problem}` });
  });

export const denyListSettingsSchema = z
  .object({
    words: z.array(z.string().trim().min(1).max(MAX_WORD_LENGTH)).max(10_000).optional(),
    patterns: z.array(pattern).max(100).optional(),
    max_match_chars: z.number().int().min(1).max(1000).optional(),
    /** a prompt longer than this (characters) is refused (or logged) */
    max_prompt_chars: z.number().int().min(1).optional(),
    /** tool names: longest accepted, and names refused outright */
    max_tool_name_chars: z.number().int().min(1).max(256).optional(),
    denied_tools: z.array(z.string().min(1).max(256)).max(1000).optional(),
    /** score tool results for prompt injection (log or block by the policy's mode) */
    tool_result_injection: z.boolean().optional(),
    injection_threshold: z.number().int().min(1).max(20).optional(),
  })
  .strict();

export const moderationSettingsSchema = z
  .object({
    /** a model of this gateway's catalog that answers `/v1/moderations`, called through the gateway's own routing */
    model: z.string().min(1).max(200).optional(),
    /** the categories that count (OpenAI's names, e.g. `violence`, `self-harm/intent`); every category when absent */
    categories: z.array(z.string().min(1).max(100)).min(1).max(50).optional(),
    /** a category counts when its score reaches this; absent: when the model flags the category */
    threshold: z.number().min(0).max(1).optional(),
    /** who the moderation call is billed to: the request's own key and account (the default), or the operator's key */
    billed_to: z.enum(['account', 'operator']).optional(),
    /** the API key (by id) the operator's moderation calls are made and billed as; required with `billed_to: operator` */
    operator_key_id: z.string().min(1).max(100).optional(),
    timeout_ms: z.number().int().min(1).max(30_000).optional(),
    /** when the moderation call fails or times out: pass the text (true) or refuse it (false, the default) */
    fail_open: z.boolean().optional(),
  })
  .strict()
  .refine((settings) => settings.billed_to !== 'operator' || settings.operator_key_id !== undefined, { message: "'operator_key_id' is required when 'billed_to' is 'operator'", path: ['operator_key_id'] });

/** Header names as HTTP allows them (the gateway sets its own framing headers); values printable and single-line. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding']);
const webhookHeaders = z
  .record(
    z.string().min(1).max(100).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name').refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by the gateway'),
    z.string().max(8000).regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must be a single-line header value'),
  )
  .refine((value) => Object.keys(value).length <= 20, 'at most 20 headers');

export const webhookSettingsSchema = z
  .object({
    /** without user name, password or fragment: credentials go in `headers`, which are sealed at rest */
    url: z.url({ protocol: /^https?$/ }).max(2000).refine((text) => {
      const url = new URL(text);
      return url.username === '' && url.password === '' && url.hash === '';
    }, 'must carry no user name, password or fragment (put credentials in headers)'),
    headers: webhookHeaders.optional(),
    timeout_ms: z.number().int().min(1).max(30_000).optional(),
    /** when the guardrail cannot be reached in time or answers badly: pass the request (true) or refuse it (false, the default) */
    fail_open: z.boolean().optional(),
  })
  .strict();

export const GUARDRAIL_SETTINGS_SCHEMAS = {
  pii: piiSettingsSchema,
  deny_list: denyListSettingsSchema,
  moderation: moderationSettingsSchema,
  webhook: webhookSettingsSchema,
} as const;

export type PiiSettings = z.infer<typeof piiSettingsSchema>;
export type DenyListSettings = z.infer<typeof denyListSettingsSchema>;
export type ModerationSettings = z.infer<typeof moderationSettingsSchema>;
export type WebhookSettings = z.infer<typeof webhookSettingsSchema>;

const base = {
  name: z.string().trim().min(1).max(100).regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
  mode: z.enum(GUARDRAIL_MODES),
  applies_to: z.enum(GUARDRAIL_APPLIES_TO),
  /** account owners and admins may attach it to their own keys in the console */
  accounts_may_use: z.boolean().optional(),
  /** what accounts may do to it where it applies to them: nothing, make it milder, or also turn it off */
  accounts_may_override: z.enum(['none', 'relax', 'disable']).optional(),
};

/** The body of `POST /admin/guardrails`: the settings are checked against the kind's own schema. */
export const guardrailInputSchema = z.discriminatedUnion('kind', [
  z.object({ ...base, kind: z.literal('pii'), settings: piiSettingsSchema.optional() }).strict(),
  z.object({ ...base, kind: z.literal('deny_list'), settings: denyListSettingsSchema.optional() }).strict(),
  z.object({ ...base, kind: z.literal('moderation'), settings: moderationSettingsSchema.optional() }).strict(),
  z.object({ ...base, kind: z.literal('webhook'), settings: webhookSettingsSchema }).strict(),
]);

export type GuardrailPolicy = z.infer<typeof guardrailInputSchema>;
export type GuardrailKind = (typeof GUARDRAIL_KINDS)[number];
export type GuardrailMode = (typeof GUARDRAIL_MODES)[number];
export type GuardrailDirection = 'input' | 'output';

