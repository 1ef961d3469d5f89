import type { UpstreamErrorClass } from '../upstream-adapter.js';

/**
 * What a Bedrock error answer means: 403 (bad or expired credentials, no model access) is the credential's; 404
 * (a model id this region or account does not have) is the channel's, so another channel may serve; 424 (the model
 * failed) and 408, 429 and 5xx are transient; any other 4xx is the caller's.
 */
export function classifyBedrockError(status: number): UpstreamErrorClass {
  if (status === 401 || status === 403) return 'credential';
  if (status === 404) return 'channel';
  if (status === 424 || status === 408 || status === 409 || status === 429 || status >= 500) return 'retryable';
  return 'caller';
}
