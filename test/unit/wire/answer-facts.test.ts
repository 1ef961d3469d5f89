import { describe, expect, it } from 'vitest';
import { anthropicAnswerFacts } from '../../../src/wire/anthropic/answer-facts.js';
import { answerFactsOfJson } from '../../../src/wire/answer-facts.js';
import { geminiAnswerFacts } from '../../../src/wire/gemini/answer-facts.js';
import { openAIChatAnswerFacts } from '../../../src/wire/openai/answer-facts.js';
import { responsesAnswerFacts } from '../../../src/wire/responses/answer-facts.js';

describe('answer facts (model and finish reasons, for traces)', () => {
  it('reads each wire\'s own fields', () => {
    expect(openAIChatAnswerFacts({ model: 'gpt-4o-2024-08-06', choices: [{ finish_reason: 'stop' }, { finish_reason: 'length' }, { finish_reason: null }] }))
      .toEqual({ model: 'gpt-4o-2024-08-06', finishReasons: ['stop', 'length'] });
    expect(anthropicAnswerFacts({ model: 'claude-sonnet-4-5-20250929', stop_reason: 'tool_use' })).toEqual({ model: 'claude-sonnet-4-5-20250929', finishReasons: ['tool_use'] });
    expect(geminiAnswerFacts({ modelVersion: 'gemini-2.5-flash', candidates: [{ finishReason: 'STOP' }] })).toEqual({ model: 'gemini-2.5-flash', finishReasons: ['STOP'] });
    expect(responsesAnswerFacts({ model: 'gpt-5', status: 'completed', incomplete_details: null })).toEqual({ model: 'gpt-5', finishReasons: ['completed'] });
    expect(responsesAnswerFacts({ model: 'gpt-5', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })).toEqual({ model: 'gpt-5', finishReasons: ['max_output_tokens'] });
  });

  it('reads a streamed Gemini JSON array from its finishing element', () => {
    expect(geminiAnswerFacts([{ modelVersion: 'g', candidates: [{}] }, { modelVersion: 'g', candidates: [{ finishReason: 'MAX_TOKENS' }] }, { usageMetadata: {} }]))
      .toEqual({ model: 'g', finishReasons: ['MAX_TOKENS'] });
  });

  it('tells nothing of bodies that are not JSON or not the wire\'s shape', () => {
    const none = { model: null, finishReasons: [] };
    expect(answerFactsOfJson(Buffer.from('<html>'), openAIChatAnswerFacts)).toEqual(none);
    expect(answerFactsOfJson(Buffer.from('[1,2]'), anthropicAnswerFacts)).toEqual(none);
    expect(openAIChatAnswerFacts({ model: 7, choices: 'x' })).toEqual(none);
    expect(geminiAnswerFacts([])).toEqual(none);
  });
});
