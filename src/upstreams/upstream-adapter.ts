import type { Channel, ChannelType } from '../storage/records.js';

/** The wire protocol an upstream speaks natively; equal to the client's, the relay takes the pass-through path. */
export type WireProtocol = 'openai-chat' | 'anthropic-messages' | 'gemini';

export type UpstreamOperation = 'chat-completions';

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | null;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer>;
  /** Stops reading and frees the connection. */
  discard(): void;
}

export interface UpstreamTimeouts {
  /** Until the response headers arrive. */
  firstByteMs: number;
  /** Longest silence between two body chunks. */
  idleMs: number;
}

export interface UpstreamTransport {
  send(request: UpstreamRequest, options: { signal: AbortSignal; timeouts: UpstreamTimeouts }): Promise<UpstreamResponse>;
}

/**
 * One upstream provider type. It knows its URLs, authentication and wire format; the relay knows none of that.
 * Translation between protocols (IR in, IR out) joins this interface with the other families.
 */
export interface UpstreamAdapter {
  readonly types: readonly ChannelType[];
  readonly protocol: WireProtocol;
  /** An HTTP request carrying `body` (already in the adapter's native protocol) to the channel. */
  buildPassThrough(channel: Channel, credential: string, operation: UpstreamOperation, upstreamModel: string, body: string): UpstreamRequest;
  /** How the request reaches the upstream: HTTP for real providers, in-process for the simulator. */
  transport(channel: Channel): UpstreamTransport;
}
