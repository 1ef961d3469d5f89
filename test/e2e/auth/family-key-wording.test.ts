import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

async function refusal(path: string, headers: Record<string, string> = {}): Promise<{ status: number; message: string }> {
  const response = await fetch(gateway.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
  const body = (await response.json()) as { error: { message: string } };
  return { status: response.status, message: body.error.message };
}

describe('a missing or malformed key is explained in the family\'s own way of sending it', () => {
  it('names x-api-key on /v1/messages and its count_tokens', async () => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const { status, message } = await refusal(path, { 'anthropic-version': '2023-06-01' });
      expect(status).toBe(401);
      expect(message).toContain('x-api-key');
      expect(message).not.toContain('Bearer');
    }
    const malformed = await refusal('/v1/messages', { authorization: 'sk-without-the-bearer-word' });
    expect(malformed.message).toContain('x-api-key');
  });

  it('names x-goog-api-key and ?key= on the Gemini routes', async () => {
    for (const path of ['/v1beta/models/some-model:generateContent', '/v1beta/models/some-model:streamGenerateContent', '/v1/models/some-model:countTokens']) {
      const { status, message } = await refusal(path);
      expect(status).toBe(401);
      expect(message).toContain('x-goog-api-key');
      expect(message).toContain('"key" query parameter');
      expect(message).not.toContain('Bearer');
    }
  });

  it('names Authorization: Bearer on the OpenAI family', async () => {
    for (const path of ['/v1/chat/completions', '/v1/responses', '/v1/embeddings']) {
      const { status, message } = await refusal(path);
      expect(status).toBe(401);
      expect(message).toContain('Authorization: Bearer <API_KEY>');
    }
  });
});
