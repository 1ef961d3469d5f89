import type { ClientCodec, PassThroughCodec } from '../codecs/client-codec.js';
import type { Channel } from '../domain/records.js';
import type { UpstreamAdapter } from '../upstreams/upstream-adapter.js';
import { passThroughOperationOf, wireCarries, type ClientWire, type UpstreamOperation } from '../wire/wire.js';

/** What the caller asked for, in the caller's wire: the operation a channel either takes as it came or translated. */
export type RequestedOperation = RequestedChat | { kind: 'embeddings'; wire: ClientWire; batch: boolean } | { kind: 'count-tokens'; wire: ClientWire };

/** A chat request in the caller's codec: passed through only where the codec has a pass-through part. */
export interface RequestedChat {
  kind: 'chat';
  codec: Pick<ClientCodec, 'wire' | 'passThrough'>;
  stream: boolean;
}

/**
 * How one channel gets the request: the caller's body with the operation the adapter is sent it with
 * (`pass-through`), or the canonical request in the channel's own wire format (`translate`).
 */
export type WireChoice = { kind: 'pass-through'; operation: UpstreamOperation } | { kind: 'translate' };

/** The choice for a chat request: passed through with the codec's pass-through part (the only way to reach that path). */
export type ChatWireChoice = { kind: 'pass-through'; operation: UpstreamOperation; codec: PassThroughCodec } | { kind: 'translate' };

const TRANSLATE: { kind: 'translate' } = { kind: 'translate' };

/**
 * The one decision between pass-through and translation, for every endpoint, asked of the wires: a channel whose
 * adapter takes bodies as they came on the wire the caller's wire is served on, for an operation that wire has and
 * the channel serves, gets the caller's body, unless the caller's stream framing has to be rebuilt from canonical
 * parts; every other channel gets the translated request.
 */
export function chooseWire(adapter: UpstreamAdapter, channel: Channel, requested: RequestedChat): ChatWireChoice;
export function chooseWire(adapter: UpstreamAdapter, channel: Channel, requested: RequestedOperation): WireChoice;
export function chooseWire(adapter: UpstreamAdapter, channel: Channel, requested: RequestedOperation): WireChoice | ChatWireChoice {
  if (requested.kind === 'chat') {
    // A chat codec without a pass-through part is always translated.
    if (requested.codec.passThrough === undefined) return TRANSLATE;
    return chatWireOf(channelPassThrough(adapter, channel, requested.codec.wire, requested), requested);
  }
  const operation = channelPassThrough(adapter, channel, requested.wire, requested);
  return operation === null ? TRANSLATE : { kind: 'pass-through', operation };
}

/**
 * The channel's part of the decision: the operation the channel is sent the caller's body with, from a caller on
 * `wire`, or null when it gets the translated request. It depends only on the adapter, the channel record, the
 * caller's wire and the requested operation (for a chat: whether it streams), so it may be kept per channel record.
 */
export function channelPassThrough(adapter: UpstreamAdapter, channel: Channel, wire: ClientWire, requested: RequestedOperation): UpstreamOperation | null {
  const passThrough = adapter.passThrough;
  if (passThrough === undefined || wire.servedOn.name !== adapter.wire.name) return null;
  const operation = passThroughOperationOf(wire, requested);
  if (operation === null || !wireCarries(adapter.wire, operation)) return null;
  if (passThrough.serves !== undefined && !passThrough.serves(channel, operation)) return null;
  return operation;
}

/** The caller's part of a chat's decision, given the channel's (`operation`, null: translated). */
export function chatWireOf(operation: UpstreamOperation | null, requested: RequestedChat): ChatWireChoice {
  const forwarding = requested.codec.passThrough;
  if (operation === null || forwarding === undefined) return TRANSLATE;
  if (requested.stream && !forwarding.streamPassesThrough()) return TRANSLATE;
  return { kind: 'pass-through', operation, codec: forwarding };
}
