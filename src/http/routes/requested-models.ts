import { GatewayError } from '../../errors/gateway-error.js';
import { MAX_FALLBACK_MODELS } from '../../routing/fallback-models.js';
import type { RequestContext } from '../request-context.js';
import type { ClientWire } from '../../wire/wire.js';

/** The extension header holding the caller's fallback models (the only way for families whose body has no room for them). */
export const REQUESTED_MODELS_HEADER = 'x-gateway-models';

function checkedList(names: readonly unknown[], param: string): string[] {
  if (names.length === 0 || names.length > MAX_FALLBACK_MODELS) {
    throw new GatewayError('bad_request', `'${param}' must list between 1 and ${MAX_FALLBACK_MODELS} models.`, { param });
  }
  for (const [index, name] of names.entries()) {
    if (typeof name !== 'string' || name.trim() === '') throw new GatewayError('bad_request', `'${param}' must hold model ids (non-empty strings).`, { param: `${param}.${index}` });
  }
  return (names as string[]).map((name) => name.trim());
}

/**
 * The caller's own fallback models, in order: the body's `models` array where its wire has room for it (OpenAI chat) (taken out of the body, so no
 * upstream sees it; a body without `model` names the list's first as its model), else the `x-gateway-models`
 * header (comma-separated ids). Null when the caller gave none; a 400 naming the field when malformed.
 */
export function takeRequestedModels(context: RequestContext, wire: ClientWire, body: Record<string, unknown>): string[] | null {
  if (wire.gatewayFields.includes('models') && 'models' in body) {
    const raw = body.models;
    delete body.models;
    if (raw !== null) {
      if (!Array.isArray(raw)) throw new GatewayError('bad_request', `'models' must be an array of model ids.`, { param: 'models' });
      const names = checkedList(raw, 'models');
      if (body.model === undefined) body.model = names[0];
      return names;
    }
  }
  const header = context.request.headers[REQUESTED_MODELS_HEADER];
  if (typeof header !== 'string' || header.trim() === '') return null;
  return checkedList(header.split(','), REQUESTED_MODELS_HEADER);
}
