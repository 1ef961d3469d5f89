/**
 * Every opaque value this gateway writes into a client's reasoning state (a thinking block's signature, a reasoning
 * item's encrypted_content) starts with this marker. Only the gateway can read such a value: a provider reached
 * with the client's own body must not get it (Anthropic refuses a signature it did not issue, OpenAI reasoning
 * state it cannot decrypt), and a byte scan for the marker tells whether a body holds any.
 */
export const GATEWAY_STATE_MARKER = 'ugw1.';

export function isGatewayState(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(GATEWAY_STATE_MARKER);
}
