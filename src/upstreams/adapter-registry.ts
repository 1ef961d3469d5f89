import type { Clock } from '../shared/clock.js';
import type { ChannelType } from '../storage/records.js';
import { AnthropicAdapter } from './anthropic/anthropic-adapter.js';
import { BedrockAdapter } from './bedrock/bedrock-adapter.js';
import { GeminiAdapter } from './gemini/gemini-adapter.js';
import { OpenAICompatiblePresetAdapter } from './openai-compatible/preset-adapter.js';
import { AzureOpenAIAdapter, OpenAIAdapter } from './openai/openai-adapter.js';
import { SimulatorAdapter } from './simulator/simulator-adapter.js';
import { VertexAIAdapter } from './vertex-ai/vertex-adapter.js';
import type { UpstreamAdapter, UpstreamTransport } from './upstream-adapter.js';

/** Channel type → adapter. Adding an upstream is one folder plus one line here. */
export class AdapterRegistry {
  readonly #byType = new Map<ChannelType, UpstreamAdapter>();

  constructor(http: UpstreamTransport, clock: Clock) {
    for (const adapter of [new OpenAIAdapter(http), new AzureOpenAIAdapter(http), new AnthropicAdapter(http), new GeminiAdapter(http), new BedrockAdapter(http), new OpenAICompatiblePresetAdapter(http), new VertexAIAdapter(http, clock), new SimulatorAdapter(clock)]) {
      for (const type of adapter.types) this.#byType.set(type, adapter);
    }
  }

  get(type: ChannelType): UpstreamAdapter | undefined {
    return this.#byType.get(type);
  }

  supports(type: ChannelType): boolean {
    return this.#byType.has(type);
  }
}
