import type { GatewayError } from '../../errors/gateway-error.js';
import { responsesErrorEvent } from './encode-stream.js';


/** A failure after a stream started, as the Responses `error` event (sequence number from the caller's stream). */
export function encodeResponsesStreamError(error: GatewayError, sequenceNumber: number): string {
  return responsesErrorEvent(sequenceNumber, error.status, error.code, error.message);
}
