import type { GatewayError } from '../../errors/gateway-error.js';

/** OpenAI's error object `{ error: { message, type, code, param } }`, the gateway's error shape on the chat-completions family. */
export function encodeOpenAIError(error: GatewayError): string {
  return JSON.stringify({
    error: { message: error.message, type: error.type, code: error.code, param: error.param ?? null },
  });
}

/** The same error as an SSE event, for failures after a stream has started. */
export function encodeOpenAIStreamError(error: GatewayError): string {
  return `data: ${encodeOpenAIError(error)}\n\n`;
}
