import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, type ContentBlock, type Message } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_AWS_CREDENTIALS, MOCK_BEDROCK_REGION, startMockBedrockUpstream, type MockBedrockUpstream } from '../../support/mock-bedrock-upstream.js';

/**
 * The Bedrock mock speaks Bedrock's wire: the AWS SDK's own BedrockRuntimeClient, pointed at it, signs its requests
 * (which the mock verifies), parses its answers and decodes its binary event streams. The client's default handler
 * speaks HTTP/2 to Bedrock; the mock (like the gateway's upstream client) speaks HTTP/1.1, so it gets the SDK's
 * HTTP/1.1 handler.
 */
let mock: MockBedrockUpstream;
let client: BedrockRuntimeClient;

const MODEL = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';
const tools = { tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } } } }] };

beforeAll(async () => {
  mock = await startMockBedrockUpstream();
  client = new BedrockRuntimeClient({ region: MOCK_BEDROCK_REGION, endpoint: mock.url, credentials: MOCK_AWS_CREDENTIALS, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
});

afterAll(async () => {
  client?.destroy();
  await mock?.close();
});

describe('the AWS SDK against the Bedrock mock', () => {
  it('converses, signed by the SDK and verified by the mock', async () => {
    const answer = await client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'Say pelican' }] }], inferenceConfig: { maxTokens: 50 } }));
    expect(answer.output?.message?.content?.[0]?.text).toBe('Echo: Say pelican');
    expect(answer.stopReason).toBe('end_turn');
    expect(answer.usage?.inputTokens).toBeGreaterThan(0);
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe('/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse');
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAMOCKBEDROCK00001\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  });

  it('streams text through the binary event stream', async () => {
    const answer = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'Tell me about the river otter' }] }] }));
    let text = '';
    let deltas = 0;
    let stopReason: string | undefined;
    let outputTokens: number | undefined;
    for await (const event of answer.stream!) {
      if (event.contentBlockDelta?.delta?.text !== undefined) {
        text += event.contentBlockDelta.delta.text;
        deltas += 1;
      }
      if (event.messageStop !== undefined) stopReason = event.messageStop.stopReason;
      if (event.metadata !== undefined) outputTokens = event.metadata.usage?.outputTokens;
    }
    expect(text).toBe('Echo: Tell me about the river otter');
    expect(deltas).toBeGreaterThan(1);
    expect(stopReason).toBe('end_turn');
    expect(outputTokens).toBeGreaterThan(0);
  });

  it('streams a tool call and takes its result', async () => {
    const messages: Message[] = [{ role: 'user', content: [{ text: 'What is the weather in Paris?' }] }];
    const answer = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages, toolConfig: tools }));
    let toolUse: { toolUseId?: string; name?: string } | undefined;
    let input = '';
    for await (const event of answer.stream!) {
      if (event.contentBlockStart?.start?.toolUse !== undefined) toolUse = event.contentBlockStart.start.toolUse;
      if (event.contentBlockDelta?.delta?.toolUse?.input !== undefined) input += event.contentBlockDelta.delta.toolUse.input;
    }
    expect(toolUse?.name).toBe('get_weather');
    expect(JSON.parse(input)).toEqual({ location: 'Paris' });
    const call: ContentBlock = { toolUse: { toolUseId: toolUse!.toolUseId!, name: 'get_weather', input: JSON.parse(input) as Record<string, string> } };
    messages.push({ role: 'assistant', content: [call] }, { role: 'user', content: [{ toolResult: { toolUseId: toolUse!.toolUseId!, content: [{ text: '18 C and clear' }] } }] });
    const second = await client.send(new ConverseCommand({ modelId: MODEL, messages, toolConfig: tools }));
    expect(second.output?.message?.content?.[0]?.text).toBe('Tool result received: 18 C and clear');
  });

  it('answers errors the SDK reads as its typed exceptions', async () => {
    const wrong = new BedrockRuntimeClient({ region: MOCK_BEDROCK_REGION, endpoint: mock.url, credentials: { accessKeyId: MOCK_AWS_CREDENTIALS.accessKeyId, secretAccessKey: 'wrong' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
    await expect(wrong.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }))).rejects.toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
    wrong.destroy();
    await expect(client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'assistant', content: [{ text: 'hi' }] }] }))).rejects.toMatchObject({ name: 'ValidationException' });
    mock.setFault({ kind: 'throttle', times: 1 });
    await expect(client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }))).rejects.toMatchObject({ name: 'ThrottlingException' });
  });

  it('delivers an in-stream exception as the SDK’s exception', async () => {
    mock.setFault({ kind: 'stream-exception', times: 1 });
    const answer = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'one two three' }] }] }));
    const read = async (): Promise<void> => {
      for await (const event of answer.stream!) void event;
    };
    await expect(read()).rejects.toMatchObject({ name: 'ThrottlingException' });
  });
});
