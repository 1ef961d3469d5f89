/**
 * The model-backed policies (a webhook guardrail, a moderation model) run on one direction's text: called side by
 * side, each verdict turned into a hit by the policy's mode and fail-open choice, the first blocking one named, and a
 * blocking webhook's rewrites gathered for the caller to apply.
 */
import type { GuardrailHit } from '../guardrails/policy.js';
import type { GuardrailPolicy, ModerationSettings } from '../guardrails/settings.js';
import { shownText, type ShownMessage, type ShownToolCall } from './chat-texts.js';
import type { WebhookGuardrailCaller, WebhookVerdict } from './webhook-guardrail.js';

/** External policies: webhook and moderation guardrails. */
export type ExternalPolicy = Extract<GuardrailPolicy, { kind: 'webhook' | 'moderation' }>;

/**
 * What an external policy is shown: the request's messages (with earlier turns' tool calls and tool results), and
 * on the way out the answer's text and the tool calls the model made; `texts` are the text parts one by one (the
 * request's, or the answer's), which a webhook's rewrite replaces in order (tool-call arguments are read, never
 * rewritten).
 */
export interface ExternalSubject {
  messages: readonly ShownMessage[];
  texts: readonly string[];
  answer?: string;
  toolCalls?: readonly ShownToolCall[];
}

/** External policies' hits, the one that blocks, and the texts a blocking webhook rewrote (null: none rewrote). */
export interface ExternalResult {
  hits: GuardrailHit[];
  blockedBy: string | null;
  rewrites: (string | undefined)[] | null;
}

/**
 * An external check's verdict: passed, failed (with what it found, by category), rewritten (a webhook's replacement
 * texts), or none (`reason`, never text).
 */
export type ExternalVerdict = WebhookVerdict | { kind: 'failed'; found: Record<string, number> };

/**
 * What the request guard needs besides its policies: the request's model and framing, the webhook caller, and the
 * moderation check (a call through the gateway's own moderation route, billed as the policy says).
 */
export interface GuardContext {
  model: string;
  stream: boolean;
  webhooks: WebhookGuardrailCaller;
  moderate: (settings: ModerationSettings, text: string) => Promise<ExternalVerdict>;
}

export function isExternal(policy: GuardrailPolicy): policy is ExternalPolicy {
  return policy.kind === 'webhook' || policy.kind === 'moderation';
}

/**
 * Runs external policies side by side; the first in order that blocks names the refusal. A blocking webhook's
 * rewrite replaces the texts it changed (where two rewrote one text, the first in order decides it); a logging
 * one's is only counted. Where a rewrite cannot be applied (`canRewrite` false), it counts as a failed check.
 */
export async function runExternal(context: GuardContext, direction: 'input' | 'output', policies: readonly ExternalPolicy[], subject: ExternalSubject, canRewrite: boolean): Promise<ExternalResult> {
  const verdicts = await Promise.all(policies.map(async (policy) => {
    const verdict = await callExternal(context, direction, policy, subject);
    return !canRewrite && verdict.kind === 'rewritten' ? { kind: 'failed' as const, found: { rewritten: changedCount(verdict.texts, subject.texts) } } : verdict;
  }));
  const hits = policies.map((policy, index) => externalHit(policy, verdicts[index] as ExternalVerdict, subject.texts));
  let rewrites: (string | undefined)[] | null = null;
  policies.forEach((policy, index) => {
    const verdict = verdicts[index] as ExternalVerdict;
    if (verdict.kind !== 'rewritten' || policy.mode !== 'block') return;
    rewrites ??= subject.texts.map(() => undefined);
    verdict.texts.forEach((text, part) => {
      if (rewrites !== null && rewrites[part] === undefined && text !== subject.texts[part]) rewrites[part] = text;
    });
  });
  return { hits, blockedBy: hits.find((hit) => hit.outcome === 'blocked')?.name ?? null, rewrites };
}

function callExternal(context: GuardContext, direction: 'input' | 'output', policy: ExternalPolicy, subject: ExternalSubject): Promise<ExternalVerdict> {
  switch (policy.kind) {
    case 'webhook':
      return context.webhooks.check(policy.settings, {
        direction,
        messages: subject.messages,
        texts: subject.texts,
        ...(subject.answer === undefined ? {} : { answer: subject.answer, toolCalls: subject.toolCalls ?? [] }),
        model: context.model,
        stream: context.stream,
        policy: policy.name,
      });
    case 'moderation':
      // The input's text (every message and earlier turns' tool-call arguments), or the answer's with its tool calls'.
      return context.moderate(policy.settings ?? {}, subject.answer === undefined
        ? shownText(subject.messages.map((message) => message.content), subject.messages.flatMap((message) => message.tool_calls ?? []))
        : shownText([subject.answer], subject.toolCalls ?? []));
    default: {
      const unknown: never = policy;
      throw new Error(`unknown external guardrail ${String(unknown)}`);
    }
  }
}

/**
 * An external policy's verdict as a hit: a failed check blocks or logs by the policy's mode; a rewrite masks (a
 * blocking policy's texts are replaced) or logs, counting the texts it changed; no verdict (timeout, fault, a bad
 * answer) passes the text when the policy fails open (`unavailable`), and when it fails closed counts as a failed
 * check.
 */
function externalHit(policy: ExternalPolicy, verdict: ExternalVerdict, sent: readonly string[]): GuardrailHit {
  const failOpen = policy.settings?.fail_open === true;
  const base = { name: policy.name, kind: policy.kind, mode: policy.mode };
  if (verdict.kind === 'passed') return { ...base, outcome: 'passed', count: 0, found: {} };
  if (verdict.kind === 'rewritten') {
    const count = changedCount(verdict.texts, sent);
    return { ...base, outcome: policy.mode === 'block' ? 'masked' : 'logged', count, found: { rewritten: count } };
  }
  if (verdict.kind === 'unavailable' && failOpen) return { ...base, outcome: 'unavailable', count: 1, found: { unavailable: 1 } };
  const found = verdict.kind === 'unavailable' ? { unavailable: 1 } : 'found' in verdict ? verdict.found : { [policy.kind]: 1 };
  const count = Object.values(found).reduce((sum, value) => sum + value, 0);
  return { ...base, outcome: policy.mode === 'block' ? 'blocked' : 'logged', count, found };
}

/** How many of the texts sent a rewrite changed. */
function changedCount(rewritten: readonly string[], sent: readonly string[]): number {
  return rewritten.filter((text, index) => text !== sent[index]).length;
}
