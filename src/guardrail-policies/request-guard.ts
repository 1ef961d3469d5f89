/**
 * One request's guardrails on the canonical request and answer, whatever the caller's family: the input policies
 * run on the request's text (system prompt, every message's text, tool results) before any upstream sees it, the
 * output policies on the answer's text and reasoning (whole, or streamed through a bounded scanner), and reversible
 * masking's placeholders are restored in the answer for the caller. External (webhook, moderation) policies run after the
 * built-in ones, on the text as masked, so a third party never sees what masking hid; on a stream they check the
 * whole answer once it is complete, before its end reaches the caller. What ran and what it did (names, outcomes
 * and counts, never text) goes to the `x-gateway-guardrails` header and the usage row.
 */
import type { GuardrailUsage } from '../domain/usage-records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { ChatResponse } from '../ir/chat-response.js';
import type { ContentPart, ReasoningPart, TextPart, ToolCallPart } from '../ir/message.js';
import type { StreamPart } from '../ir/stream-part.js';
import type { ResolvedGuardrails } from './guardrail-book.js';
import { MaskVault, restore, StreamRestorer } from '../guardrails/masking.js';
import type { GuardrailHit, GuardrailVerdict } from '../guardrails/policy.js';
import type { GuardrailPolicy, ModerationSettings } from '../guardrails/settings.js';
import type { StreamScanner } from '../guardrails/stream-scanner.js';
import type { WebhookGuardrailCaller, WebhookVerdict } from './webhook-guardrail.js';

/** Joins a request's text parts for one evaluation; no detector matches it, so a masked text splits back apart. */
const SEPARATOR = '\u0000\n';

/** A refusal by a guardrail: names the policy and the direction, never the text it found. */
export function guardrailBlocked(policy: string, direction: 'input' | 'output', headers: Record<string, string>): GatewayError {
  const what = direction === 'input' ? 'The request was refused' : 'The answer was stopped';
  return new GatewayError('guardrail_blocked', `${what} by the guardrail policy '${policy}'.`, { headers });
}

/** Text parts of the request the input policies read and may mask, and its tool names and tool results. */
function inputParts(chat: ChatRequest): { texts: TextPart[]; toolResults: string[] } {
  const texts: TextPart[] = [...chat.system];
  const toolResults: string[] = [];
  for (const message of chat.messages) {
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part);
      else if (part.type === 'tool-result') {
        for (const inner of part.content) {
          if (inner.type !== 'text') continue;
          texts.push(inner);
          toolResults.push(inner.text);
        }
      }
    }
  }
  return { texts, toolResults };
}

function textPartsOf(content: readonly ContentPart[]): TextPart[] {
  return content.filter((part): part is TextPart => part.type === 'text');
}

/** A text the output policies read: the answer's text, and its reasoning where the family carries it. */
type ReadText = TextPart | ReasoningPart;

/** The answer's text and readable reasoning parts (an encrypted reasoning block has no text to read). */
function answerTexts(content: readonly ContentPart[]): ReadText[] {
  return content.filter((part): part is ReadText => part.type === 'text' || (part.type === 'reasoning' && part.redactedData === undefined && part.text !== ''));
}

/**
 * A tool call's arguments as texts the output policies read: the strings of its JSON (the raw text when it is not
 * JSON), so masking replaces only inside strings; `write` puts the masked strings back (the arguments' own text is
 * kept when nothing changed).
 */
function argumentTexts(part: ToolCallPart): { texts: { text: string }[]; write: () => void } {
  let root: unknown;
  try {
    root = JSON.parse(part.argumentsJson);
  } catch {
    const raw = { text: part.argumentsJson };
    return { texts: [raw], write: () => { part.argumentsJson = raw.text; } };
  }
  const slots: { text: string; original: string; put: (text: string) => void }[] = [];
  // Walked with a list rather than recursion: the model chooses how deep its arguments nest.
  const pending: { value: unknown; put: (text: string) => void }[] = [{ value: root, put: (text) => { root = text; } }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, put } = next;
    if (typeof value === 'string') slots.push({ text: value, original: value, put });
    else if (Array.isArray(value)) value.forEach((item, index) => pending.push({ value: item, put: (text) => { value[index] = text; } }));
    else if (value !== null && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      for (const [key, item] of Object.entries(object)) pending.push({ value: item, put: (text) => { object[key] = text; } });
    }
  }
  return {
    texts: slots,
    write: () => {
      if (slots.every((slot) => slot.text === slot.original)) return;
      for (const slot of slots) slot.put(slot.text);
      part.argumentsJson = JSON.stringify(root);
    },
  };
}

/** A reasoning block whose text the gateway changed no longer matches its provider's signature: the signature goes. */
function dropStaleSignatures(parts: readonly ReadText[], before: readonly string[]): void {
  parts.forEach((part, index) => {
    if (part.type === 'reasoning' && part.signature !== undefined && part.text !== before[index]) delete part.signature;
  });
}

/** External policies of one direction: webhook guardrails. */
type ExternalPolicy = Extract<GuardrailPolicy, { kind: 'webhook' | 'moderation' }>;

/**
 * What an external policy is shown: the request's messages, and the answer's text on the way out; `texts` are the
 * text parts one by one (the request's, or the answer's), which a webhook's rewrite replaces in order.
 */
interface ExternalSubject {
  messages: readonly { role: string; content: string }[];
  texts: readonly string[];
  answer?: string;
}

/** External policies' hits, the one that blocks, and the texts a blocking webhook rewrote (null: none rewrote). */
interface ExternalResult {
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

/** The request's text as OpenAI chat messages (what an external guardrail is shown), after the built-in masking. */
function messagesOf(chat: ChatRequest): { role: string; content: string }[] {
  const messages: { role: string; content: string }[] = [];
  const system = chat.system.map((part) => part.text).join('\n');
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const message of chat.messages) {
    const texts: string[] = [];
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'tool-result') for (const inner of part.content) if (inner.type === 'text') texts.push(inner.text);
    }
    if (texts.length > 0) messages.push({ role: message.role, content: texts.join('\n') });
  }
  return messages;
}

export class RequestGuard {
  /** The originals behind reversible placeholders; never leaves the gateway. */
  readonly vault = new MaskVault();
  #input: GuardrailHit[] = [];
  #output: GuardrailHit[] = [];
  /** The request's messages as the external output policies are shown them (set by the input check). */
  #messages: readonly { role: string; content: string }[] = [];

  /** `usage` is the request's list the usage row keeps (RequestMeter.guardrails). */
  constructor(
    private readonly resolved: ResolvedGuardrails,
    private readonly usage: GuardrailUsage[],
    private readonly context: GuardContext,
  ) {}

  /**
   * Runs the input policies on `chat` (its text, tool results, and the arguments of earlier turns' tool calls),
   * masking in place; throws `guardrail_blocked` when one blocks.
   */
  async checkInput(chat: ChatRequest): Promise<void> {
    const { texts, toolResults } = inputParts(chat);
    const calls = chat.messages.flatMap((message) => message.content.filter((part): part is ToolCallPart => part.type === 'tool-call')).map(argumentTexts);
    const read: { text: string }[] = [...texts, ...calls.flatMap((call) => call.texts)];
    const toolNames = (chat.tools ?? []).map((tool) => tool.name);
    const joined = read.map((part) => part.text).join(SEPARATOR);
    const verdict = this.resolved.set.evaluate('input', { text: joined, toolNames, toolResults }, this.vault);
    this.#record('input', verdict.summary);
    if (verdict.action === 'block') throw guardrailBlocked(verdict.blockedBy ?? '', 'input', this.headers());
    if (verdict.action === 'mask') {
      writeBack(read, verdict.text, (text) => this.resolved.set.evaluate('input', { text }, this.vault).text);
      for (const call of calls) call.write();
    }
    if (verdict.external.length === 0 && !this.#hasExternal('output')) return;
    this.#messages = messagesOf(chat);
    if (verdict.external.length === 0) return;
    const external = await this.#runExternal('input', verdict.external as ExternalPolicy[], { messages: this.#messages, texts: texts.map((part) => part.text) }, true);
    this.#record('input', [...verdict.summary, ...external.hits]);
    if (external.blockedBy !== null) throw guardrailBlocked(external.blockedBy, 'input', this.headers());
    if (external.rewrites !== null) {
      applyRewrites(texts, external.rewrites);
      this.#messages = messagesOf(chat);
    }
  }

  /**
   * Runs the input policies on a request's caller texts that are not chat (an embedding's inputs, a rerank's query
   * and documents, an image prompt, a speech input), masking them in place; throws `guardrail_blocked` when one
   * blocks. No text comes back from these requests, so a reversible mask is applied as a plain one (nothing is kept to
   * restore). External policies are shown each text as a user message.
   */
  async checkTexts(texts: readonly { text: string }[]): Promise<void> {
    const joined = texts.map((part) => part.text).join(SEPARATOR);
    const verdict = this.resolved.set.evaluate('input', { text: joined });
    this.#record('input', verdict.summary);
    if (verdict.action === 'block') throw guardrailBlocked(verdict.blockedBy ?? '', 'input', this.headers());
    if (verdict.action === 'mask') writeBack(texts, verdict.text, (text) => this.resolved.set.evaluate('input', { text }).text);
    if (verdict.external.length === 0) return;
    const messages = texts.map((part) => ({ role: 'user', content: part.text }));
    const external = await this.#runExternal('input', verdict.external as ExternalPolicy[], { messages, texts: texts.map((part) => part.text) }, true);
    this.#record('input', [...verdict.summary, ...external.hits]);
    if (external.blockedBy !== null) throw guardrailBlocked(external.blockedBy, 'input', this.headers());
    if (external.rewrites !== null) applyRewrites(texts, external.rewrites);
  }

  /** Whether any policy reads the answer, or placeholders are to be restored in it. */
  get readsOutput(): boolean {
    return this.vault.size > 0 || this.resolved.policies.some((policy) => policy.applies_to !== 'input');
  }

  /**
   * Runs the output policies on a whole answer's text, reasoning and tool-call arguments (the strings of their JSON),
   * masking in place, then the external ones on the masked text, then restores the request's placeholders in its
   * text, reasoning and tool-call arguments; throws `guardrail_blocked` when one blocks. A reasoning block whose text
   * changed loses its signature.
   */
  async checkAnswer(answer: ChatResponse): Promise<void> {
    const texts = answerTexts(answer.content);
    const before = texts.map((part) => part.text);
    const calls = answer.content.filter((part): part is ToolCallPart => part.type === 'tool-call').map(argumentTexts);
    const read: { text: string }[] = [...texts, ...calls.flatMap((call) => call.texts)];
    const joined = read.map((part) => part.text).join(SEPARATOR);
    const verdict = this.resolved.set.evaluate('output', { text: joined });
    this.#record('output', verdict.summary);
    if (verdict.action === 'block') throw guardrailBlocked(verdict.blockedBy ?? '', 'output', this.headers());
    if (verdict.action === 'mask') {
      writeBack(read, verdict.text, (text) => this.resolved.set.evaluate('output', { text }).text);
      for (const call of calls) call.write();
    }
    if (verdict.external.length > 0) {
      const answerParts = textPartsOf(answer.content);
      const answerTexts = answerParts.map((part) => part.text);
      const external = await this.#runExternal('output', verdict.external as ExternalPolicy[], { messages: this.#messages, texts: answerTexts, answer: answerTexts.join('') }, true);
      this.#record('output', [...verdict.summary, ...external.hits]);
      if (external.blockedBy !== null) throw guardrailBlocked(external.blockedBy, 'output', this.headers());
      if (external.rewrites !== null) applyRewrites(answerParts, external.rewrites);
    }
    if (this.vault.size > 0) {
      for (const part of answer.content) {
        if (part.type === 'text' || part.type === 'reasoning') part.text = restore(part.text, this.vault);
        else if (part.type === 'tool-call') part.argumentsJson = restore(part.argumentsJson, this.vault);
      }
    }
    dropStaleSignatures(texts, before);
  }

  /** The answer's stream with the output policies and the placeholders' restoration applied (one per attempt). */
  guardStream(parts: AsyncIterable<StreamPart>): AsyncIterable<StreamPart> {
    return new StreamGuard(this).run(parts);
  }

  /** `name=outcome;count` per policy and direction that ran, for `x-gateway-guardrails`. */
  headers(): Record<string, string> {
    const entries = [...this.#input.map((hit) => [hit, 'input'] as const), ...this.#output.map((hit) => [hit, 'output'] as const)];
    return entries.length === 0 ? {} : { 'x-gateway-guardrails': entries.map(([hit, direction]) => `${hit.name}/${direction}=${hit.outcome};${hit.count}`).join(', ') };
  }

  /** @internal the set, for the stream guard */
  get set(): ResolvedGuardrails['set'] {
    return this.resolved.set;
  }

  /** @internal records one direction's summary (an answer's replaces an earlier attempt's) */
  record(direction: 'input' | 'output', summary: readonly GuardrailHit[]): void {
    this.#record(direction, summary);
  }

  /**
   * @internal the external output policies on a complete streamed answer: their hits, and the one that blocks. The
   * answer was delivered as it came, so a rewrite cannot be applied: it counts as a failed check.
   */
  async checkStreamedAnswer(answer: string): Promise<{ hits: GuardrailHit[]; blockedBy: string | null }> {
    const policies = this.resolved.policies.filter((policy): policy is ExternalPolicy => isExternal(policy) && policy.applies_to !== 'input');
    if (policies.length === 0) return { hits: [], blockedBy: null };
    return this.#runExternal('output', policies, { messages: this.#messages, texts: [answer], answer }, false);
  }

  #hasExternal(direction: 'input' | 'output'): boolean {
    return this.resolved.policies.some((policy) => isExternal(policy) && (policy.applies_to === 'both' || policy.applies_to === direction));
  }

  /**
   * Runs external policies side by side; the first in order that blocks names the refusal. A blocking webhook's
   * rewrite replaces the texts it changed (where two rewrote one text, the first in order decides it); a logging
   * one's is only counted. Where a rewrite cannot be applied (`canRewrite` false), it counts as a failed check.
   */
  async #runExternal(direction: 'input' | 'output', policies: readonly ExternalPolicy[], subject: ExternalSubject, canRewrite: boolean): Promise<ExternalResult> {
    const verdicts = await Promise.all(policies.map(async (policy) => {
      const verdict = await this.#callExternal(direction, policy, subject);
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

  #callExternal(direction: 'input' | 'output', policy: ExternalPolicy, subject: ExternalSubject): Promise<ExternalVerdict> {
    switch (policy.kind) {
      case 'webhook':
        return this.context.webhooks.check(policy.settings, { direction, messages: subject.messages, texts: subject.texts, ...(subject.answer === undefined ? {} : { answer: subject.answer }), model: this.context.model, stream: this.context.stream, policy: policy.name });
      case 'moderation':
        // The input's text (every message), or the answer's.
        return this.context.moderate(policy.settings ?? {}, subject.answer ?? subject.messages.map((message) => message.content).join('\n'));
      default: {
        const unknown: never = policy;
        throw new Error(`unknown external guardrail ${String(unknown)}`);
      }
    }
  }

  #record(direction: 'input' | 'output', summary: readonly GuardrailHit[]): void {
    if (direction === 'input') this.#input = [...summary];
    else this.#output = [...summary];
    // The usage row's list: this direction's entries replaced.
    const kept = this.usage.filter((entry) => entry.direction !== direction);
    this.usage.length = 0;
    this.usage.push(...kept, ...summary.map((hit) => ({ name: hit.name, direction, outcome: hit.outcome, count: hit.count })));
  }
}

function isExternal(policy: GuardrailPolicy): policy is ExternalPolicy {
  return policy.kind === 'webhook' || policy.kind === 'moderation';
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

/** Replaces the parts' texts a webhook rewrote (an undefined entry leaves its part as it is). */
function applyRewrites(parts: readonly { text: string }[], rewrites: readonly (string | undefined)[]): void {
  parts.forEach((part, index) => {
    const text = rewrites[index];
    if (text !== undefined) part.text = text;
  });
}

/** Puts a masked joined text back into its parts; when a mask swallowed a separator, masks each part on its own. */
function writeBack(parts: readonly { text: string }[], masked: string, maskOne: (text: string) => string): void {
  const pieces = masked.split(SEPARATOR);
  if (pieces.length === parts.length) {
    parts.forEach((part, index) => {
      part.text = pieces[index] as string;
    });
    return;
  }
  for (const part of parts) part.text = maskOne(part.text);
}

/** One streamed text, reasoning or tool-call arguments block on its way through the output policies. */
interface Lane {
  kind: 'text' | 'reasoning' | 'tool';
  scanner: { scanner: StreamScanner; blocking: Set<string> } | undefined;
  restorer: StreamRestorer | null;
  /** the block as the upstream wrote it, and as the caller gets it */
  raw: string;
  sent: string;
  /** the block after the output masking, before the placeholders are restored (what external policies see) */
  scanned: string;
}

/** The delta part that carries a lane's text. */
function deltaType(kind: Lane['kind']): 'text-delta' | 'reasoning-delta' | 'tool-input-delta' {
  return kind === 'text' ? 'text-delta' : kind === 'reasoning' ? 'reasoning-delta' : 'tool-input-delta';
}

/**
 * The output policies on one streamed answer: each text, reasoning and tool-call arguments block goes through its own
 * stream scanner (held back by at most its window, a match straddling chunks caught; arguments are scanned as the
 * JSON text they stream as), then through the placeholder restorer. A blocking match ends the stream with `guardrail_blocked`
 * (thrown), the text that held it never sent. External output policies check the complete answer before the finish
 * part is passed on. A reasoning block whose text was changed loses its signature.
 */
class StreamGuard {
  readonly #lanes = new Map<string, Lane>();
  /** The answer's text and reasoning as the upstream wrote them, block by block, for the summary at the end. */
  #raw = '';
  /** The answer's text after the output masking, for external policies. */
  #answer = '';
  #externalHits: GuardrailHit[] = [];

  constructor(private readonly guard: RequestGuard) {}

  async *run(parts: AsyncIterable<StreamPart>): AsyncIterable<StreamPart> {
    for await (const part of parts) {
      switch (part.type) {
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-input-delta': {
          const lane = this.#lane(part.id, part.type === 'text-delta' ? 'text' : part.type === 'reasoning-delta' ? 'reasoning' : 'tool');
          lane.raw += part.delta;
          const text = this.#release(lane, lane.scanner?.scanner.push(part.delta) ?? null, part.delta);
          if (text !== '') yield { ...part, delta: text };
          continue;
        }
        case 'text-end':
        case 'reasoning-end':
        case 'tool-input-end': {
          const lane = this.#lanes.get(part.id);
          if (lane === undefined) break;
          const rest = this.#close(part.id, lane);
          if (rest !== '') yield { type: deltaType(lane.kind), id: part.id, delta: rest };
          if (part.type === 'reasoning-end' && part.signature !== undefined && lane.sent !== lane.raw) {
            const { signature: _stale, ...unsigned } = part;
            yield unsigned;
            continue;
          }
          break;
        }
        case 'finish': {
          for (const [id, lane] of [...this.#lanes]) {
            const rest = this.#close(id, lane);
            if (rest !== '') yield { type: deltaType(lane.kind), id, delta: rest };
          }
          const external = await this.guard.checkStreamedAnswer(this.#answer);
          this.#externalHits = external.hits;
          this.#summarise();
          if (external.blockedBy !== null) throw guardrailBlocked(external.blockedBy, 'output', this.guard.headers());
          break;
        }
        default:
          break;
      }
      yield part;
    }
  }

  #lane(id: string, kind: Lane['kind']): Lane {
    let lane = this.#lanes.get(id);
    if (lane === undefined) this.#lanes.set(id, (lane = { kind, scanner: this.guard.set.outputScanner(), restorer: null, raw: '', sent: '', scanned: '' }));
    return lane;
  }

  /** Ends one block: what its scanner and restorer still hold. */
  #close(id: string, lane: Lane): string {
    const scanned = lane.scanner === undefined ? '' : this.#release(lane, lane.scanner.scanner.end(), '');
    const rest = lane.restorer?.end() ?? '';
    lane.sent += rest;
    this.#lanes.delete(id);
    this.#raw += lane.raw + SEPARATOR;
    if (lane.kind === 'text') this.#answer += lane.scanned;
    return scanned + rest;
  }

  /** The scanned text made safe to send (restored), or the block. */
  #release(lane: Lane, scanned: { text: string; spans: { kind: string }[] } | null, raw: string): string {
    if (scanned !== null && lane.scanner !== undefined && scanned.spans.some((span) => lane.scanner?.blocking.has(span.kind) === true)) {
      this.#raw += lane.raw;
      const verdict = this.#summarise();
      throw guardrailBlocked(verdict.blockedBy ?? 'output', 'output', this.guard.headers());
    }
    const text = scanned === null ? raw : scanned.text;
    lane.scanned += text;
    if (this.guard.vault.size === 0) {
      lane.sent += text;
      return text;
    }
    lane.restorer ??= new StreamRestorer(this.guard.vault);
    const restored = lane.restorer.push(text);
    lane.sent += restored;
    return restored;
  }

  /** The output policies' summary of the answer so far (with the external ones' once they ran), for the usage row. */
  #summarise(): GuardrailVerdict {
    const verdict = this.guard.set.evaluate('output', { text: this.#raw });
    this.guard.record('output', [...verdict.summary, ...this.#externalHits]);
    return verdict;
  }
}
