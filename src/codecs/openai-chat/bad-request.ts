import { GatewayError } from '../../errors/gateway-error.js';

/** A 400 naming the request field at fault (OpenAI's `param`). */
export function badRequest(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}
