/**
 * Values of the OpenTelemetry GenAI semantic conventions the gateway emits: the operation a request performs and
 * the provider a channel type stands for. Types without a registered provider name keep their own.
 */
const PROVIDERS: Readonly<Record<string, string>> = {
  openai: 'openai',
  'openai-compatible': 'openai',
  'azure-openai': 'azure.ai.openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  'vertex-ai': 'gcp.vertex_ai',
  bedrock: 'aws.bedrock',
  deepseek: 'deepseek',
  groq: 'groq',
  mistral: 'mistral_ai',
  perplexity: 'perplexity',
  xai: 'x_ai',
};

/** `gen_ai.provider.name` of a channel type. */
export function providerNameOf(channelType: string): string {
  return PROVIDERS[channelType] ?? channelType;
}

/** `gen_ai.operation.name` of a request, from its usage-log protocol label. */
export function operationNameOf(protocol: string): string {
  switch (protocol) {
    case 'openai-chat':
    case 'anthropic-messages':
    case 'openai-responses':
      return 'chat';
    case 'gemini':
      return 'generate_content';
    case 'openai-embeddings':
    case 'gemini-embeddings':
      return 'embeddings';
    default:
      // Media endpoints have no registered operation: their own label (`openai-images`, `openai-audio`, …).
      return protocol;
  }
}

/** Bucket boundaries the conventions recommend for `gen_ai.client.token.usage`. */
export const TOKEN_BUCKETS: readonly number[] = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/** Bucket boundaries the conventions recommend for GenAI durations, in seconds. */
export const DURATION_BUCKETS: readonly number[] = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
