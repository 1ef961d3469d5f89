import { withFields } from '../../shared/with-fields.js';
import { isJsonObject, type JsonObject } from '../json-object.js';
import { isGatewayState } from '../gateway-state.js';

/**
 * A Responses body for OpenAI itself, without the reasoning items this gateway made: their encrypted_content holds
 * another provider's reasoning state, which OpenAI cannot decrypt and refuses (`invalid_encrypted_content`), and
 * with `store: false` an item without it would be looked up by an id OpenAI never issued. OpenAI's own reasoning
 * items stay as they came. The body itself when it holds no such item.
 */
export function withoutGatewayReasoning(body: JsonObject): JsonObject {
  const input = body.input;
  if (!Array.isArray(input) || !input.some(isGatewayReasoning)) return body;
  return withFields(body, { input: input.filter((item) => !isGatewayReasoning(item)) });
}

function isGatewayReasoning(item: unknown): boolean {
  return isJsonObject(item) && item.type === 'reasoning' && isGatewayState(item.encrypted_content);
}
