import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import { ManualClock } from '../../../../src/shared/clock.js';
import type { Channel } from '../../../../src/domain/records.js';
import type { UpstreamTransport } from '../../../../src/upstreams/upstream-adapter.js';
import { isAnthropicAnswer, isAnthropicStream, peekStream } from '../../../../src/upstreams/vertex-ai/sniff-answer.js';
import { VertexAIAdapter } from '../../../../src/upstreams/vertex-ai/vertex-adapter.js';

const key = JSON.stringify({
  type: 'service_account',
  project_id: 'key-project',
  private_key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: 'sa@key-project.iam.gserviceaccount.com',
});
const adapter = new VertexAIAdapter({} as UpstreamTransport, new ManualClock(0));

function channel(settings: Record<string, unknown>): Channel {
  return { id: 'ch', name: 'v', type: 'vertex-ai', baseUrl: null, apiKeys: [key], models: {}, priority: 0, weight: 1, enabled: true, headers: {}, settings, createdAt: 0, updatedAt: 0 };
}

function chat(stream: boolean): ChatRequest {
  return { model: 'public', system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream, maxOutputTokens: 64, extensions: {}, warnings: [] };
}

describe('VertexAIAdapter requests', () => {
  it('sends Gemini models to the Google publisher, on the global endpoint by default, with the key file’s project', () => {
    const request = adapter.buildChatRequest(channel({}), key, chat(true), 'gemini-2.5-pro');
    expect(request.url).toBe('https://aiplatform.googleapis.com/v1/projects/key-project/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    expect(JSON.parse(request.body as string)).toMatchObject({ systemInstruction: { parts: [{ text: 'Be brief.' }] }, generationConfig: { maxOutputTokens: 64 } });
    expect(request.authorize).toBeTypeOf('function');
    expect(request.headers).not.toHaveProperty('authorization');
  });

  it('sends Claude to the Anthropic publisher in a region: the Messages body with anthropic_version and no model', () => {
    const request = adapter.buildChatRequest(channel({ project_id: 'other-project', location: 'europe-west1' }), key, chat(false), 'claude-opus-4-1@20250805');
    expect(request.url).toBe('https://europe-west1-aiplatform.googleapis.com/v1/projects/other-project/locations/europe-west1/publishers/anthropic/models/claude-opus-4-1%4020250805:rawPredict');
    const body = JSON.parse(request.body as string) as Record<string, unknown>;
    expect(body).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
  });
});

describe('telling a Vertex answer’s wire', () => {
  it('knows an Anthropic message from a Gemini answer, even one whose text mentions the other', () => {
    expect(isAnthropicAnswer(Buffer.from('{"id":"msg_1","type":"message","role":"assistant","content":[]}'))).toBe(true);
    expect(isAnthropicAnswer(Buffer.from('{"candidates":[{"content":{"parts":[{"text":"{\\"type\\":\\"message\\"}"}]}}]}'))).toBe(false);
    expect(isAnthropicStream('event: message_start\ndata: {"type":"message_start"}')).toBe(true);
    expect(isAnthropicStream('data: {"candidates":[{"content":{"parts":[{"text":"event: x"}]}}]}')).toBe(false);
  });

  it('replays the peeked chunk, and closes the body when the reader stops early', async () => {
    let closed = false;
    const body: AsyncIterable<Buffer> = {
      [Symbol.asyncIterator]: () => {
        let index = 0;
        return {
          next: () => Promise.resolve(index < 3 ? { done: false, value: Buffer.from(`chunk${index++}`) } : { done: true, value: undefined }),
          return: () => {
            closed = true;
            return Promise.resolve({ done: true, value: undefined });
          },
        };
      },
    };
    const { head, stream } = await peekStream(body);
    expect(head).toBe('chunk0');
    const seen: string[] = [];
    for await (const chunk of stream) {
      seen.push(chunk.toString());
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['chunk0', 'chunk1']);
    expect(closed).toBe(true);
  });
});
