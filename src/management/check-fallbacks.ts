import { GatewayError } from '../errors/gateway-error.js';
import type { ModelKind } from '../domain/model-records.js';

/** What the check needs to know of a model a fallback names. */
export interface KnownModel {
  id: string;
  kind: ModelKind;
}

/**
 * A model's fallbacks as the admin API and gateway.yaml accept them: each names a model that exists (by id or
 * alias, as `lookup` resolves it), of the same kind, and none is the model itself. A 400 naming the entry otherwise.
 */
export function checkFallbacks(model: KnownModel, fallbacks: readonly string[], lookup: (name: string) => KnownModel | undefined): void {
  for (const [index, name] of fallbacks.entries()) {
    const param = `fallbacks.${index}`;
    const target = name === model.id ? model : lookup(name);
    if (target === undefined) throw new GatewayError('bad_request', `Fallback model '${name}' does not exist; create it first.`, { param });
    if (target.id === model.id) throw new GatewayError('bad_request', `Model '${model.id}' cannot fall back to itself.`, { param });
    if (target.kind !== model.kind) {
      throw new GatewayError('bad_request', `Fallback model '${name}' is a ${target.kind} model; the fallbacks of a ${model.kind} model must be ${model.kind} models.`, { param });
    }
  }
}
