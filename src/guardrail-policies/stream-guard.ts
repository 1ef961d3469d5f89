import type { StreamPart } from '../ir/stream-part.js';
import { StreamRestorer } from '../guardrails/masking.js';
import type { MaskVault } from '../guardrails/masking.js';
import type { GuardrailHit, GuardrailSet } from '../guardrails/policy.js';
import type { StreamScanner } from '../guardrails/stream-scanner.js';
import type { BlockTally, StreamTally } from '../guardrails/stream-tally.js';
import { guardrailBlocked } from './guardrail-blocked.js';
import type { ShownToolCall } from './chat-texts.js';

/** What a stream guard uses of its request's guard (RequestGuard): the policies, the vault and the record. */
export interface StreamGuardHost {
  readonly vault: MaskVault;
  readonly set: GuardrailSet;
  record(direction: 'output', summary: readonly GuardrailHit[]): void;
  headers(): Record<string, string>;
  /** whether external output policies check the complete answer (only then is its text kept) */
  readonly checksAnswer: boolean;
  /** the external output policies on the complete answer and its tool calls: their hits, and the one that blocks */
  checkStreamedAnswer(answer: string, toolCalls: readonly ShownToolCall[]): Promise<{ hits: GuardrailHit[]; blockedBy: string | null }>;
}

/** One streamed text, reasoning or tool-call arguments block on its way through the output policies. */
interface Lane {
  kind: 'text' | 'reasoning' | 'tool';
  scanner: { scanner: StreamScanner; blocking: Set<string> } | undefined;
  restorer: StreamRestorer | null;
  /** the output policies' counts of the block */
  tally: BlockTally;
  /** whether what the caller gets differs from what the upstream wrote: `pending` is the upstream's text not yet sent */
  changed: boolean;
  pending: string;
  /** the block after the output masking, before the placeholders are restored (kept only for external policies) */
  scanned: string;
  /** a tool call's wire id and name (tool-call arguments blocks) */
  call?: { id: string; name: string };
}

/** The delta part that carries a lane's text. */
function deltaType(kind: Lane['kind']): 'text-delta' | 'reasoning-delta' | 'tool-input-delta' {
  return kind === 'text' ? 'text-delta' : kind === 'reasoning' ? 'reasoning-delta' : 'tool-input-delta';
}

/**
 * The output policies on one streamed answer: each text, reasoning and tool-call arguments block goes through its own
 * stream scanner (held back by at most its window, a match straddling chunks caught; arguments are scanned as the
 * JSON text they stream as), then through the placeholder restorer. A blocking match ends the stream with `guardrail_blocked`
 * (thrown), the text that held it never sent. External output policies check the complete answer, its text and the
 * tool calls the model made, before the finish part is passed on. A reasoning block whose text was changed loses its signature.
 *
 * Memory per stream is bounded by the policies, not the answer's length: a block keeps its scanner's window and
 * look-behind, the tally's (one scanner per output policy with detectors), the restorer's unfinished placeholder and
 * the text received but not yet sent; the summary is counted as the text passes. Only when external output policies
 * check the complete answer is its text kept, for them (`held` says what is kept).
 */
export class StreamGuard {
  readonly #lanes = new Map<string, Lane>();
  /** The output policies' counts, block by block, for the summary. */
  readonly #tally: StreamTally;
  /** The answer's text and tool calls after the output masking, for external policies (empty when there are none). */
  #answer = '';
  readonly #toolCalls: ShownToolCall[] = [];
  /** Tool calls started, by block id, until their arguments block opens. */
  readonly #started = new Map<string, { id: string; name: string }>();
  #externalHits: GuardrailHit[] = [];

  constructor(private readonly guard: StreamGuardHost) {
    this.#tally = guard.set.outputTally();
  }

  /** Characters the guard keeps of the stream now: bounded by the policies unless external ones keep the answer. */
  get held(): number {
    let held = this.#answer.length + this.#toolCalls.reduce((sum, call) => sum + call.function.arguments.length, 0);
    for (const lane of this.#lanes.values()) {
      held += (lane.scanner?.scanner.retained ?? 0) + lane.tally.retained + (lane.restorer?.held ?? 0) + lane.pending.length + lane.scanned.length;
    }
    return held;
  }

  async *run(parts: AsyncIterable<StreamPart>): AsyncIterable<StreamPart> {
    for await (const part of parts) {
      switch (part.type) {
        case 'tool-input-start':
          this.#started.set(part.id, { id: part.toolCallId, name: part.toolName });
          break;
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-input-delta': {
          const lane = this.#lane(part.id, part.type === 'text-delta' ? 'text' : part.type === 'reasoning-delta' ? 'reasoning' : 'tool');
          lane.tally.push(part.delta);
          if (!lane.changed) lane.pending += part.delta;
          const text = this.#release(lane, lane.scanner?.scanner.push(part.delta) ?? null, part.delta);
          if (text !== '') yield { ...part, delta: text };
          continue;
        }
        case 'text-end':
        case 'reasoning-end':
        case 'tool-input-end': {
          const lane = this.#lanes.get(part.id);
          const started = this.#started.get(part.id);
          this.#started.delete(part.id);
          if (lane === undefined) {
            // A call with no arguments streamed: shown with empty arguments.
            if (started !== undefined) this.#toolCalls.push({ id: started.id, type: 'function', function: { name: started.name, arguments: '' } });
            break;
          }
          const rest = this.#close(part.id, lane);
          if (rest !== '') yield { type: deltaType(lane.kind), id: part.id, delta: rest };
          if (part.type === 'reasoning-end' && part.signature !== undefined && (lane.changed || lane.pending !== '')) {
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
          const external = await this.guard.checkStreamedAnswer(this.#answer, this.#toolCalls);
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
    if (lane === undefined) {
      const call = kind === 'tool' ? this.#started.get(id) : undefined;
      this.#lanes.set(id, (lane = { kind, scanner: this.guard.set.outputScanner(), restorer: null, tally: this.#tally.block(), changed: false, pending: '', scanned: '', ...(call === undefined ? {} : { call }) }));
    }
    return lane;
  }

  /** Ends one block: what its scanner and restorer still hold. */
  #close(id: string, lane: Lane): string {
    const scanned = lane.scanner === undefined ? '' : this.#release(lane, lane.scanner.scanner.end(), '');
    const rest = lane.restorer?.end() ?? '';
    this.#sent(lane, rest);
    this.#lanes.delete(id);
    lane.tally.end();
    if (lane.kind === 'text') this.#answer += lane.scanned;
    else if (lane.kind === 'tool') this.#toolCalls.push({ id: lane.call?.id ?? id, type: 'function', function: { name: lane.call?.name ?? '', arguments: lane.scanned } });
    return scanned + rest;
  }

  /** The scanned text made safe to send (restored), or the block. */
  #release(lane: Lane, scanned: { text: string; spans: { kind: string }[] } | null, raw: string): string {
    if (scanned !== null && lane.scanner !== undefined && scanned.spans.some((span) => lane.scanner?.blocking.has(span.kind) === true)) {
      lane.tally.end();
      const verdict = this.#summarise();
      throw guardrailBlocked(verdict.blockedBy ?? 'output', 'output', this.guard.headers());
    }
    const text = scanned === null ? raw : scanned.text;
    if (this.guard.checksAnswer) lane.scanned += text;
    if (this.guard.vault.size === 0) {
      this.#sent(lane, text);
      return text;
    }
    lane.restorer ??= new StreamRestorer(this.guard.vault);
    const restored = lane.restorer.push(text);
    this.#sent(lane, restored);
    return restored;
  }

  /** Notes text sent of a block: while it is what the upstream wrote, the upstream's pending text shrinks by it. */
  #sent(lane: Lane, text: string): void {
    if (lane.changed || text === '') return;
    if (lane.pending.startsWith(text)) lane.pending = lane.pending.slice(text.length);
    else {
      lane.changed = true;
      lane.pending = '';
    }
  }

  /** The output policies' summary of the answer so far (with the external ones' once they ran), for the usage row. */
  #summarise(): { blockedBy?: string } {
    const verdict = this.#tally.summary();
    this.guard.record('output', [...verdict.summary, ...this.#externalHits]);
    return verdict;
  }
}
