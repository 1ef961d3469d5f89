/**
 * One request's guardrails on the canonical request and answer, whatever the caller's family: the input policies
 * run on the request's text (system prompt, every message's text, tool results) before any upstream sees it, the
 * output policies on the answer's text and reasoning (whole, or streamed through a bounded scanner: stream-guard.ts),
 * and reversible masking's placeholders are restored in the answer for the caller. External (webhook, moderation)
 * policies run after the built-in ones, on the text as masked, so a third party never sees what masking hid; on a
 * stream they check the whole answer once it is complete, before its end reaches the caller. What ran and what it did
 * (names, outcomes and counts, never text) goes to the `x-gateway-guardrails` header and the usage row.
 */
import type { GuardrailUsage } from '../domain/usage-records.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { ChatResponse } from '../ir/chat-response.js';
import type { ToolCallPart } from '../ir/message.js';
import type { StreamPart } from '../ir/stream-part.js';
import { MaskVault, restore } from '../guardrails/masking.js';
import type { GuardrailHit } from '../guardrails/policy.js';
import type { ResolvedGuardrails } from './guardrail-book.js';
import { answerTexts, dropStaleSignatures, inputParts, messagesOf, textPartsOf, toolCallsOf, type ShownMessage, type ShownToolCall } from './chat-texts.js';
import { isExternal, runExternal, type ExternalPolicy, type GuardContext } from './external-policies.js';
import { guardrailBlocked } from './guardrail-blocked.js';
import { applyRewrites, joinTexts, writeBack } from './joined-texts.js';
import { StreamGuard } from './stream-guard.js';
import { argumentTexts } from './tool-call-arguments.js';

export class RequestGuard {
  /** The originals behind reversible placeholders; never leaves the gateway. */
  readonly vault = new MaskVault();
  #input: GuardrailHit[] = [];
  #output: GuardrailHit[] = [];
  /** The request's messages as the external output policies are shown them (set by the input check). */
  #messages: readonly ShownMessage[] = [];

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
    const verdict = this.resolved.set.evaluate('input', { text: joinTexts(read), toolNames, toolResults }, this.vault);
    this.#record('input', verdict.summary);
    if (verdict.action === 'block') throw guardrailBlocked(verdict.blockedBy ?? '', 'input', this.headers());
    if (verdict.action === 'mask') {
      writeBack(read, verdict.text, (text) => this.resolved.set.evaluate('input', { text }, this.vault).text);
      for (const call of calls) call.write();
    }
    if (verdict.external.length === 0 && !this.#hasExternal('output')) return;
    this.#messages = messagesOf(chat);
    if (verdict.external.length === 0) return;
    const external = await runExternal(this.context, 'input', verdict.external as ExternalPolicy[], { messages: this.#messages, texts: texts.map((part) => part.text) }, true);
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
    const verdict = this.resolved.set.evaluate('input', { text: joinTexts(texts) });
    this.#record('input', verdict.summary);
    if (verdict.action === 'block') throw guardrailBlocked(verdict.blockedBy ?? '', 'input', this.headers());
    if (verdict.action === 'mask') writeBack(texts, verdict.text, (text) => this.resolved.set.evaluate('input', { text }).text);
    if (verdict.external.length === 0) return;
    const messages = texts.map((part) => ({ role: 'user', content: part.text }));
    const external = await runExternal(this.context, 'input', verdict.external as ExternalPolicy[], { messages, texts: texts.map((part) => part.text) }, true);
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
    const verdict = this.resolved.set.evaluate('output', { text: joinTexts(read) });
    this.#record('output', verdict.summary);
    if (verdict.action === 'block') throw guardrailBlocked(verdict.blockedBy ?? '', 'output', this.headers());
    if (verdict.action === 'mask') {
      writeBack(read, verdict.text, (text) => this.resolved.set.evaluate('output', { text }).text);
      for (const call of calls) call.write();
    }
    if (verdict.external.length > 0) {
      const answerParts = textPartsOf(answer.content);
      const answerTexts = answerParts.map((part) => part.text);
      const external = await runExternal(this.context, 'output', verdict.external as ExternalPolicy[], { messages: this.#messages, texts: answerTexts, answer: answerTexts.join(''), toolCalls: toolCallsOf(answer.content) }, true);
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

  /** @internal whether external output policies check a streamed answer whole (so the stream guard keeps its text) */
  get checksAnswer(): boolean {
    return this.#hasExternal('output');
  }

  /** @internal records one direction's summary (an answer's replaces an earlier attempt's) */
  record(direction: 'input' | 'output', summary: readonly GuardrailHit[]): void {
    this.#record(direction, summary);
  }

  /**
   * @internal the external output policies on a complete streamed answer (its text and the tool calls the model
   * made): their hits, and the one that blocks. The answer was delivered as it came, so a rewrite cannot be applied:
   * it counts as a failed check.
   */
  async checkStreamedAnswer(answer: string, toolCalls: readonly ShownToolCall[]): Promise<{ hits: GuardrailHit[]; blockedBy: string | null }> {
    const policies = this.resolved.policies.filter((policy): policy is ExternalPolicy => isExternal(policy) && policy.applies_to !== 'input');
    if (policies.length === 0) return { hits: [], blockedBy: null };
    return runExternal(this.context, 'output', policies, { messages: this.#messages, texts: [answer], answer, toolCalls }, false);
  }

  #hasExternal(direction: 'input' | 'output'): boolean {
    return this.resolved.policies.some((policy) => isExternal(policy) && (policy.applies_to === 'both' || policy.applies_to === direction));
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
