/**
 * The wires the gateway speaks, by name. A client protocol and an upstream that share a wire take the pass-through
 * path (the caller's body goes upstream as it came); any other pairing is translated through the canonical form.
 */
/** The wire protocol an upstream speaks natively; equal to the client's, the relay takes the pass-through path. */
export type WireProtocol = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'gemini';

/** Wires that only upstreams speak: no client protocol equals them, so their requests are always translated. */
export type UpstreamOnlyProtocol = 'bedrock-converse' | 'vertex-ai';

export function isClientWire(protocol: WireProtocol | UpstreamOnlyProtocol): protocol is WireProtocol {
  return protocol !== 'bedrock-converse' && protocol !== 'vertex-ai';
}

/**
 * Pass-through operations, named by the protocol's own endpoint: the body is the client's, in the upstream's
 * own protocol. `model` is the upstream model name (Gemini carries it in the URL, the others in the body).
 */
export type UpstreamOperation =
  | { kind: 'chat'; stream: boolean }
  | { kind: 'count-tokens' }
  | { kind: 'embeddings'; batch: boolean }
  /** OpenAI's Responses API (`POST /responses`), served natively only where `servesPassThrough` says so. */
  | { kind: 'responses'; stream: boolean }
  /** The Responses API's token counter (`POST /responses/input_tokens`), on the same channels as `responses`. */
  | { kind: 'responses-input-tokens' };
