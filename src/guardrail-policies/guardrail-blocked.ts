import { GatewayError } from '../errors/gateway-error.js';

/** A refusal by a guardrail: names the policy and the direction, never the text it found. */
export function guardrailBlocked(policy: string, direction: 'input' | 'output', headers: Record<string, string>): GatewayError {
  const what = direction === 'input' ? 'The request was refused' : 'The answer was stopped';
  return new GatewayError('guardrail_blocked', `${what} by the guardrail policy '${policy}'.`, { headers });
}
