import { GatewayError } from '../../errors/gateway-error.js';

/** A 400 naming the request field at fault, rendered with Google's status `INVALID_ARGUMENT`. */
export function invalidArgument(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}
