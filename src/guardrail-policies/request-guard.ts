/**
 * One request's guardrails on the canonical request and answer, whatever the caller's family: the input policies
 * run on the request's text (system prompt, every message's text, tool results) before any upstream sees it, the
 * output policies on the answer's text (whole, or streamed through a bounded scanner), and reversible masking's
 * placeholders are restored in the answer for the caller. What ran and what it did (names, outcomes and counts,
 * never text) goes to the `x-gateway-guardrails` header and the usage row.
 */
import type { GuardrailUsage } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { ChatResponse } from '../ir/chat-response.js';
import type { ContentPart, TextPart } from '../ir/message.js';
import type { StreamPart } from '../ir/stream-part.js';
import type { ResolvedGuardrails } from './guardrail-book.js';
import { MaskVault, restore, StreamRestorer } from '../guardrails/masking.js';
import type { GuardrailHit, GuardrailVerdict } from '../guardrails/policy.js';
import type { StreamScanner } from '../guardrails/stream-scanner.js';

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

export class RequestGuard {
  /** The originals behind reversible placeholders; never leaves the gateway. */
  readonly vault = new MaskVault();
  #input: GuardrailHit[] = [];
  #output: GuardrailHit[] = [];

  /** `usage` is the request's list the usage row keeps (RequestMeter.guardrails). */
  constructor(
    private readonly resolved: ResolvedGuardrails,
    private readonly usage: GuardrailUsage[],
  ) {}

  /** Runs the input policies on `chat`, masking its text in place; throws `guardrail_blocked` when one blocks. */
  checkInput(chat: ChatRequest): void {
    const { texts, toolResults } = inputParts(chat);
    const toolNames = (chat.tools ?? []).map((tool) => tool.name);
    const joined = texts.map((part) => part.text).join(SEPARATOR);
    const verdict = this.resolved.set.evaluate('input', { text: joined, toolNames, toolResults }, this.vault);
    this.#record('input', verdict.summary);
    if (verdict.action === 'block') throw guardrailBlocked(verdict.blockedBy ?? '', 'input', this.headers());
    if (verdict.action === 'mask') writeBack(texts, verdict.text, (text) => this.resolved.set.evaluate('input', { text }, this.vault).text);
  }

  /** Whether any policy reads the answer, or placeholders are to be restored in it. */
  get readsOutput(): boolean {
    return this.vault.size > 0 || this.resolved.policies.some((policy) => policy.applies_to !== 'input');
  }

  /**
   * Runs the output policies on a whole answer (masking its text in place), then restores the request's
   * placeholders in its text and tool-call arguments; throws `guardrail_blocked` when one blocks.
   */
  checkAnswer(answer: ChatResponse): void {
    const texts = textPartsOf(answer.content);
    const joined = texts.map((part) => part.text).join(SEPARATOR);
    const verdict = this.resolved.set.evaluate('output', { text: joined });
    this.#record('output', verdict.summary);
    if (verdict.action === 'block') throw guardrailBlocked(verdict.blockedBy ?? '', 'output', this.headers());
    if (verdict.action === 'mask') writeBack(texts, verdict.text, (text) => this.resolved.set.evaluate('output', { text }).text);
    if (this.vault.size === 0) return;
    for (const part of answer.content) {
      if (part.type === 'text') part.text = restore(part.text, this.vault);
      else if (part.type === 'tool-call') part.argumentsJson = restore(part.argumentsJson, this.vault);
    }
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

  #record(direction: 'input' | 'output', summary: readonly GuardrailHit[]): void {
    if (direction === 'input') this.#input = [...summary];
    else this.#output = [...summary];
    // The usage row's list: this direction's entries replaced.
    const kept = this.usage.filter((entry) => entry.direction !== direction);
    this.usage.length = 0;
    this.usage.push(...kept, ...summary.map((hit) => ({ name: hit.name, direction, outcome: hit.outcome, count: hit.count })));
  }
}

/** Puts a masked joined text back into its parts; when a mask swallowed a separator, masks each part on its own. */
function writeBack(parts: readonly TextPart[], masked: string, maskOne: (text: string) => string): void {
  const pieces = masked.split(SEPARATOR);
  if (pieces.length === parts.length) {
    parts.forEach((part, index) => {
      part.text = pieces[index] as string;
    });
    return;
  }
  for (const part of parts) part.text = maskOne(part.text);
}

/**
 * The output policies on one streamed answer: each text block goes through the stream scanner (held back by at most
 * its window, a match straddling chunks caught), then through the placeholder restorer; tool-call arguments get
 * their placeholders restored. A blocking match ends the stream with `guardrail_blocked` (thrown), the text that
 * held it never sent.
 */
class StreamGuard {
  #scanner: { scanner: StreamScanner; blocking: Set<string> } | undefined;
  #text: StreamRestorer | null = null;
  readonly #tools = new Map<string, StreamRestorer>();
  /** The answer's text as the upstream wrote it, for the summary at the end. */
  #raw = '';
  /** The open text block, for what the scanner still holds when a stream finishes without closing it. */
  #textId: string | null = null;

  constructor(private readonly guard: RequestGuard) {
    this.#scanner = guard.set.outputScanner();
  }

  async *run(parts: AsyncIterable<StreamPart>): AsyncIterable<StreamPart> {
    const vault = this.guard.vault;
    for await (const part of parts) {
      switch (part.type) {
        case 'text-delta': {
          this.#textId = part.id;
          this.#raw += part.delta;
          const text = this.#release(this.#scanner?.scanner.push(part.delta) ?? null, part.delta);
          if (text !== '') yield { ...part, delta: text };
          continue;
        }
        case 'text-end': {
          const rest = this.#flushText();
          if (rest !== '') yield { type: 'text-delta', id: part.id, delta: rest };
          this.#raw += SEPARATOR;
          yield part;
          continue;
        }
        case 'tool-input-delta': {
          if (vault.size === 0) break;
          let restorer = this.#tools.get(part.id);
          if (restorer === undefined) this.#tools.set(part.id, (restorer = new StreamRestorer(vault)));
          const text = restorer.push(part.delta);
          if (text !== '') yield { ...part, delta: text };
          continue;
        }
        case 'tool-input-end': {
          const rest = this.#tools.get(part.id)?.end() ?? '';
          this.#tools.delete(part.id);
          if (rest !== '') yield { type: 'tool-input-delta', id: part.id, delta: rest };
          break;
        }
        case 'finish': {
          const open = this.#textId;
          const rest = open === null ? '' : this.#flushText();
          if (open !== null && rest !== '') yield { type: 'text-delta', id: open, delta: rest };
          this.#summarise();
          break;
        }
        default:
          break;
      }
      yield part;
    }
  }

  /** Ends the open text block: what the scanner and the restorer still hold; the next block starts afresh. */
  #flushText(): string {
    const scanned = this.#scanner === undefined ? '' : this.#release(this.#scanner.scanner.end(), '');
    const rest = scanned + (this.#text?.end() ?? '');
    this.#text = null;
    this.#textId = null;
    this.#scanner = this.guard.set.outputScanner();
    return rest;
  }

  /** The scanned text made safe to send (restored), or the block. */
  #release(scanned: { text: string; spans: { kind: string }[] } | null, raw: string): string {
    if (scanned !== null && this.#scanner !== undefined && scanned.spans.some((span) => this.#scanner?.blocking.has(span.kind) === true)) {
      const verdict = this.#summarise();
      throw guardrailBlocked(verdict.blockedBy ?? 'output', 'output', this.guard.headers());
    }
    const text = scanned === null ? raw : scanned.text;
    if (this.guard.vault.size === 0) return text;
    this.#text ??= new StreamRestorer(this.guard.vault);
    return this.#text.push(text);
  }

  /** The output policies' summary of the answer so far, recorded for the usage row. */
  #summarise(): GuardrailVerdict {
    const verdict = this.guard.set.evaluate('output', { text: this.#raw });
    this.guard.record('output', verdict.summary);
    return verdict;
  }
}
