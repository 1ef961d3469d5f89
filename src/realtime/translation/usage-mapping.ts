import { objectOf } from './frame-translator.js';
import { count, modalityTokens } from '../gemini-live-usage.js';

/** OpenAI Realtime's `response.usage`. */
export interface OpenAIRealtimeUsage {
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  input_token_details: { text_tokens: number; audio_tokens: number; image_tokens: number; cached_tokens: number; cached_tokens_details: { text_tokens: number; audio_tokens: number; image_tokens: number } };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

/**
 * Gemini Live's `usageMetadata` as OpenAI Realtime's `response.usage`, token for token as the gateway bills it: input
 * is the prompt with the tool-use prompt, its AUDIO entries audio and the rest text; cached the cached content (AUDIO
 * entries audio); output the answer with the thinking (billed as output text), its AUDIO entries audio.
 */
export function openAIUsageOfGemini(metadata: unknown): OpenAIRealtimeUsage {
  const fields = objectOf(metadata);
  const input = count(fields.promptTokenCount) + count(fields.toolUsePromptTokenCount);
  const audioInput = Math.min(input, modalityTokens(fields.promptTokensDetails, 'AUDIO') + modalityTokens(fields.toolUsePromptTokensDetails, 'AUDIO'));
  const cached = Math.min(input, count(fields.cachedContentTokenCount));
  const cachedAudio = Math.min(audioInput, cached, modalityTokens(fields.cacheTokensDetails, 'AUDIO'));
  const answer = fields.responseTokenCount !== undefined ? count(fields.responseTokenCount) : count(fields.candidatesTokenCount);
  const output = answer + count(fields.thoughtsTokenCount);
  const audioOutput = Math.min(answer, modalityTokens(fields.responseTokensDetails, 'AUDIO'));
  return {
    total_tokens: input + output,
    input_tokens: input,
    output_tokens: output,
    input_token_details: {
      text_tokens: input - audioInput,
      audio_tokens: audioInput,
      image_tokens: 0,
      cached_tokens: cached,
      cached_tokens_details: { text_tokens: cached - cachedAudio, audio_tokens: cachedAudio, image_tokens: 0 },
    },
    output_token_details: { text_tokens: output - audioOutput, audio_tokens: audioOutput },
  };
}

interface ModalityTokenCount {
  modality: 'TEXT' | 'AUDIO' | 'IMAGE';
  tokenCount: number;
}

function details(entries: Array<[ModalityTokenCount['modality'], number]>): ModalityTokenCount[] {
  return entries.filter(([, tokens]) => tokens > 0).map(([modality, tokenCount]) => ({ modality, tokenCount }));
}

/**
 * OpenAI Realtime's `response.usage` as Gemini Live's `usageMetadata`, token for token: the prompt is the input (text,
 * audio and image entries), the cached content its cached part, the response the output (text and audio entries).
 */
export function geminiUsageOfOpenAI(usage: unknown): Record<string, unknown> {
  const fields = objectOf(usage);
  const inputDetails = objectOf(fields.input_token_details);
  const cachedDetails = objectOf(inputDetails.cached_tokens_details);
  const outputDetails = objectOf(fields.output_token_details);
  const input = count(fields.input_tokens);
  const output = count(fields.output_tokens);
  const audioInput = Math.min(input, count(inputDetails.audio_tokens));
  const imageInput = Math.min(input - audioInput, count(inputDetails.image_tokens));
  const cached = Math.min(input, count(inputDetails.cached_tokens));
  const cachedAudio = Math.min(cached, audioInput, count(cachedDetails.audio_tokens));
  const cachedImage = Math.min(cached - cachedAudio, imageInput, count(cachedDetails.image_tokens));
  const audioOutput = Math.min(output, count(outputDetails.audio_tokens));
  const metadata: Record<string, unknown> = {
    promptTokenCount: input,
    responseTokenCount: output,
    totalTokenCount: input + output,
    promptTokensDetails: details([['TEXT', input - audioInput - imageInput], ['AUDIO', audioInput], ['IMAGE', imageInput]]),
    responseTokensDetails: details([['TEXT', output - audioOutput], ['AUDIO', audioOutput]]),
  };
  if (cached > 0) {
    metadata.cachedContentTokenCount = cached;
    metadata.cacheTokensDetails = details([['TEXT', cached - cachedAudio - cachedImage], ['AUDIO', cachedAudio], ['IMAGE', cachedImage]]);
  }
  return metadata;
}
