/**
 * The output policies' counts over a streamed answer, kept without keeping the answer: each block (text, reasoning,
 * a tool call's arguments) runs through a chain of stream scanners, one per policy with detectors, in the policies'
 * order, each masking policy's output feeding the next as `GuardrailSet.evaluate` masks the text the next policy sees.
 * A block's counts join the answer's when the block ends, so the summary is the one `evaluate` gives for the ended
 * blocks joined, while each block holds at most its scanners' windows and look-behind (never the text it has seen).
 */
import type { Detector } from './detectors.js';
import type { GuardrailHit, GuardrailOutcome } from './guardrail-hit.js';
import type { GuardrailPolicy } from './settings.js';
import { StreamScanner } from './stream-scanner.js';

/** An output policy as the tally counts it: its detectors (none: it always passes) and whether it masks. */
export interface TalliedPolicy {
  policy: GuardrailPolicy;
  detectors: readonly Detector[];
}

type Found = Record<string, number>;

/**
 * Text gathered before the tally's scanners read it: they count, they release nothing, so reading a kilobyte at a
 * time costs the rescans of small chunks once per kilobyte instead of once per chunk, for a kilobyte more held.
 */
export const TALLY_BATCH_CHARS = 1024;

function add(into: Found, from: Found): void {
  for (const [kind, count] of Object.entries(from)) into[kind] = (into[kind] ?? 0) + count;
}

/** One block's chain of scanners and what each counted so far. */
export class BlockTally {
  readonly #stages: { scanner: StreamScanner | null; found: Found }[];
  #batch = '';
  #ended = false;

  constructor(policies: readonly TalliedPolicy[], private readonly onEnd: (found: readonly Found[]) => void) {
    this.#stages = policies.map(({ policy, detectors }) => ({
      scanner: detectors.length === 0 ? null : new StreamScanner(detectors, policy.mode === 'mask'),
      found: {},
    }));
  }

  /**
   * Characters the chain holds (the batch, the scanners' held windows and look-behind), bounded by the policies'
   * detectors and the batch, not the stream: at most TALLY_BATCH_CHARS plus each scanner's `cap` between chunks.
   */
  get retained(): number {
    return this.#batch.length + this.#stages.reduce((sum, stage) => sum + (stage.scanner?.retained ?? 0), 0);
  }

  push(text: string): void {
    this.#batch += text;
    if (this.#batch.length < TALLY_BATCH_CHARS) return;
    const batch = this.#batch;
    this.#batch = '';
    this.#pass(batch, false);
  }

  /** The block's end: what the scanners hold is counted, and the block's counts join the answer's (once). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const batch = this.#batch;
    this.#batch = '';
    this.#pass(batch, true);
    this.onEnd(this.#stages.map((stage) => stage.found));
  }

  #pass(text: string, ending: boolean): void {
    let carried = text;
    for (const stage of this.#stages) {
      if (stage.scanner === null) continue;
      const pushed = carried === '' ? { text: '', spans: [] } : stage.scanner.push(carried);
      const rest = ending ? stage.scanner.end() : { text: '', spans: [] };
      for (const span of [...pushed.spans, ...rest.spans]) stage.found[span.kind] = (stage.found[span.kind] ?? 0) + 1;
      carried = pushed.text + rest.text;
    }
  }
}

/** The answer's counts: blocks are opened from it, and its summary is read at any time (ended blocks only). */
export class StreamTally {
  readonly #found: Found[];

  constructor(private readonly policies: readonly TalliedPolicy[]) {
    this.#found = policies.map(() => ({}));
  }

  block(): BlockTally {
    return new BlockTally(this.policies, (found) => found.forEach((counts, index) => add(this.#found[index] as Found, counts)));
  }

  /** As `evaluate` summarises the output direction: policy by policy, up to the first that blocks. */
  summary(): { summary: GuardrailHit[]; blockedBy?: string } {
    const summary: GuardrailHit[] = [];
    for (const [index, { policy }] of this.policies.entries()) {
      const found = { ...(this.#found[index] as Found) };
      const count = Object.values(found).reduce((sum, value) => sum + value, 0);
      const outcome: GuardrailOutcome = count === 0 ? 'passed' : policy.mode === 'block' ? 'blocked' : policy.mode === 'mask' ? 'masked' : 'logged';
      summary.push({ name: policy.name, kind: policy.kind, mode: policy.mode, outcome, count, found });
      if (outcome === 'blocked') return { summary, blockedBy: policy.name };
    }
    return { summary };
  }
}
