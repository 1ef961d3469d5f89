/**
 * A heuristic for prompt injection in tool results: text a tool returned that tries to give the model orders.
 * Signals, each with a weight: override phrases ("ignore previous instructions"), role tags or chat-template markers
 * a tool has no reason to emit, invisible Unicode tag characters and bidirectional overrides (text the user cannot
 * see), and "new instructions" framing. The score is the sum of the signals found; `flagged` is score ≥ threshold.
 */

export interface InjectionSignal {
  name: string;
  weight: number;
}

export interface InjectionVerdict {
  score: number;
  flagged: boolean;
  /** the names of the signals found (never the text) */
  signals: string[];
}

const SIGNALS: readonly (InjectionSignal & { pattern: RegExp })[] = [
  {
    name: 'override_instructions',
    weight: 3,
    pattern: /\b(?:ignore|disregard|forget|override)\b.{0,30}\b(?:previous|prior|above|earlier|all|any|your|system)\b.{0,30}\b(?:instructions?|prompts?|rules|directions|guidelines|messages?)\b/i,
  },
  { name: 'role_tag', weight: 3, pattern: /<\|?\/?(?:system|im_start|im_end|assistant|user|endoftext)\|?>|\[\/?INST\]|<<\/?SYS>>|^\s*(?:system|assistant)\s*:/im },
  { name: 'hidden_unicode', weight: 3, pattern: /[\u{E0000}-\u{E007F}\u202A-\u202E\u2066-\u2069]/u },
  { name: 'new_instructions', weight: 2, pattern: /\b(?:new|updated|real|actual)\s+(?:system\s+)?instructions?\s*:|\byou\s+are\s+now\b|\bfrom\s+now\s+on\s+you\b/i },
  { name: 'exfiltration', weight: 2, pattern: /\b(?:send|post|forward|upload|leak|reveal|print)\b.{0,40}\b(?:system prompt|api key|password|credentials|secrets?)\b/i },
  { name: 'zero_width', weight: 1, pattern: /[\u200B-\u200D\u2060\uFEFF]{3}/u },
];

export const DEFAULT_INJECTION_THRESHOLD = 3;

export function scoreInjection(text: string, threshold = DEFAULT_INJECTION_THRESHOLD): InjectionVerdict {
  let score = 0;
  const signals: string[] = [];
  for (const signal of SIGNALS) {
    if (signal.pattern.test(text)) {
      score += signal.weight;
      signals.push(signal.name);
    }
  }
  return { score, flagged: score >= threshold, signals };
}
