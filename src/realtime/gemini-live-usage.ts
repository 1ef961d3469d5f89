import type { Usage } from '../ir/usage.js';

/** A count from the wire: a non-negative integer, else 0 (the upstream is read tolerantly). */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/** The tokens of `modality` in a list of Gemini's `{modality, tokenCount}` details. */
export function modalityTokens(details: unknown, modality: string): number {
  if (!Array.isArray(details)) return 0;
  let total = 0;
  for (const detail of details) {
    if (typeof detail === 'object' && detail !== null && (detail as { modality?: unknown }).modality === modality) total += count((detail as { tokenCount?: unknown }).tokenCount);
  }
  return total;
}

/**
 * The usage of one Gemini Live turn, from a server message's `usageMetadata`: the prompt (`promptTokenCount`, the
 * whole context the turn read, with `toolUsePromptTokenCount`), its cached part (`cachedContentTokenCount`), the
 * answer (`responseTokenCount`; `candidatesTokenCount` as the older name) and the thinking (`thoughtsTokenCount`,
 * billed as output). The AUDIO entries of `promptTokensDetails`, `cacheTokensDetails` and `responseTokensDetails` are
 * kept apart so they are billed at the audio prices. Null when the metadata is not an object.
 */
export function usageOfLiveMetadata(metadata: unknown): Usage | null {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return null;
  const fields = metadata as Record<string, unknown>;
  const input = count(fields.promptTokenCount) + count(fields.toolUsePromptTokenCount);
  const cacheRead = Math.min(input, count(fields.cachedContentTokenCount));
  const answer = fields.responseTokenCount !== undefined ? count(fields.responseTokenCount) : count(fields.candidatesTokenCount);
  const reasoning = count(fields.thoughtsTokenCount);
  const audioInput = Math.min(input, modalityTokens(fields.promptTokensDetails, 'AUDIO') + modalityTokens(fields.toolUsePromptTokensDetails, 'AUDIO'));
  const audioCached = Math.min(audioInput, cacheRead, modalityTokens(fields.cacheTokensDetails, 'AUDIO'));
  const audioOutput = Math.min(answer, modalityTokens(fields.responseTokensDetails, 'AUDIO'));
  const usage: Usage = {
    input: { total: input, noCache: input - cacheRead, cacheRead, cacheWrite: 0 },
    output: { total: answer + reasoning, text: answer - audioOutput, reasoning },
  };
  if (audioInput + audioOutput > 0) usage.audio = { input: audioInput, cacheRead: audioCached, output: audioOutput };
  return usage;
}
