import { GATEWAY_STATE_MARKER } from '../../wire/gateway-state.js';
import { isSignatureOfNextBlock } from '../carried-signature.js';

/**
 * A reasoning item's `encrypted_content` on a bridged answer carries the upstream's opaque reasoning state
 * (Anthropic's thinking signature or redacted thinking, Gemini's thought signature) so that a stateless client
 * (`store: false`, Codex-style) can hand it back on the next turn. The prefix tells these apart from OpenAI's own
 * encrypted reasoning, which no other provider can read. A signature of the item after the reasoning (Gemini's on a
 * function call or text) is written as carried-signature.ts says and read back as the reasoning's signature, which
 * restoreCarriedSignatures then moves to that item.
 */
const SIGNATURE_PREFIX = `${GATEWAY_STATE_MARKER}s.`;
const REDACTED_PREFIX = `${GATEWAY_STATE_MARKER}r.`;

export function encodeReasoningToken(part: { signature?: string; redactedData?: string }): string | null {
  if (part.redactedData !== undefined) return REDACTED_PREFIX + part.redactedData;
  if (part.signature !== undefined) return SIGNATURE_PREFIX + part.signature;
  return null;
}

/** The provider state inside a token this gateway issued; null for foreign (OpenAI) encrypted content. */
export function decodeReasoningToken(token: string): { signature: string } | { redactedData: string } | null {
  if (isSignatureOfNextBlock(token)) return { signature: token };
  if (token.startsWith(SIGNATURE_PREFIX)) return { signature: token.slice(SIGNATURE_PREFIX.length) };
  if (token.startsWith(REDACTED_PREFIX)) return { redactedData: token.slice(REDACTED_PREFIX.length) };
  return null;
}
