import { bindGuardrails, boundGuardrails, takeGuardrailNames } from '../../guardrail-policies/guardrail-admin.js';
import { guardrailAdminOf } from './guardrail-routes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { channelFromInput, channelPatchFromInput, channelToJson, createChannelSchema, updateChannelSchema } from '../../management/channel-input.js';
import { checkFallbacks } from '../../management/check-fallbacks.js';
import { createModelSchema, modelFromInput, modelPatchFromInput, modelToJson, updateModelSchema } from '../../management/model-input.js';
import { pageJson, pageRequestFrom } from '../../management/pagination.js';
import { operatorCopy, type CatalogModel } from '../../catalog/catalog-model.js';
import { parseInput } from '../../management/parse-input.js';
import type { GatewayServices } from '../../services.js';
import { channelFormOf, UPSTREAMS } from '../../upstreams/upstreams.js';
import { COMMON_CHANNEL_SETTINGS, type ChannelForm } from '../../upstreams/channel-form.js';

/** A channel type's form as the console reads it: the type's own settings, then those every type takes. */
function channelFormJson(form: ChannelForm): ChannelTypeJson['form'] {
  return {
    credential: form.credential,
    credential_hint: form.credentialHint ?? null,
    base_url: form.baseUrl,
    base_url_hint: form.baseUrlHint ?? null,
    upstream_model_hint: form.upstreamModelHint ?? null,
    settings: [...form.settings, ...COMMON_CHANNEL_SETTINGS].map((field) => ({
      name: field.name, label: field.label, input: field.input, required: field.required ?? false,
      options: field.options === undefined ? null : [...field.options], placeholder: field.placeholder ?? null, hint: field.hint ?? null,
    })),
  };
}
import { sendJson } from '../respond.js';
import type { ChannelTypeJson, ChannelTypeListJson } from '../../contract/channels.js';
import type { AdminModelJson } from '../../contract/models.js';
import { isUniqueViolation, notFound, readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

/**
 * Announces a change of channels or models (of one channel when `channelId` is given); settles once this process and
 * every sibling worker route by it.
 */
export function catalogChanged(services: Pick<GatewayServices, 'invalidation'>, channelId?: string): Promise<void> {
  return services.invalidation.publish(channelId === undefined ? { kind: 'catalog' } : { kind: 'catalog', channelId });
}

/** The admin API's /admin/channels and /admin/models, guarded by the admin token. */
export const CATALOG_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage, clock } = services;
  const changed = (channelId?: string): Promise<void> => catalogChanged(services, channelId);
  // The channel types this build knows, from the upstream registry: what the console's channel form offers.
  const channelTypes = UPSTREAMS.flatMap((upstream) => upstream.channelTypes.map((type): ChannelTypeJson => ({
    type,
    form: channelFormJson(channelFormOf(type)),
    protocol: upstream.wire.name,
    streaming: upstream.capabilities.streaming,
    embeddings: upstream.capabilities.embeddings,
    media: [...upstream.capabilities.media],
    count_tokens: upstream.capabilities.countTokens,
  })));
  /** The bundled catalog's model of exactly this id that no stored record overrides yet. */
  const bundledOnly = (id: string): CatalogModel | null => {
    const model = services.catalog.model(id);
    return model !== undefined && model.id === id && model.priceSource === 'bundled' ? model : null;
  };
  return { services, storage, clock, changed, channelTypes, bundledOnly };
}, [
  { method: 'POST', path: '/admin/channels', handler: ({ storage, clock, changed }) => async (context) => {
    const channel = channelFromInput(parseInput(createChannelSchema, await readAdminBody(context)), clock.now());
    try {
      await storage.channels.create(channel);
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', `A channel named '${channel.name}' already exists.`, { param: 'name' });
      throw error;
    }
    await changed();
    sendJson(context, 201, channelToJson(channel));
  } },
  { method: 'GET', path: '/admin/channel-types', handler: ({ channelTypes }) => async (context) => {
    const list: ChannelTypeListJson = { object: 'list', data: channelTypes };
    sendJson(context, 200, list);
  } },
  { method: 'GET', path: '/admin/channels', handler: ({ storage }) => async (context) => {
    sendJson(context, 200, pageJson(await storage.channels.list(pageRequestFrom(context.query)), channelToJson));
  } },
  { method: 'GET', path: '/admin/channels/:id', handler: ({ storage }) => async (context) => {
    const id = context.params.id ?? '';
    const channel = await storage.channels.getById(id);
    if (channel === null) throw notFound('channel', id);
    sendJson(context, 200, channelToJson(channel));
  } },
  { method: 'PATCH', path: '/admin/channels/:id', handler: ({ storage, clock, changed }) => async (context) => {
    const id = context.params.id ?? '';
    const existing = await storage.channels.getById(id);
    if (existing === null) throw notFound('channel', id);
    const patch = channelPatchFromInput(existing, parseInput(updateChannelSchema, await readAdminBody(context)));
    let updated;
    try {
      updated = await storage.channels.update(id, patch, clock.now());
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', 'Another channel already has that name.', { param: 'name' });
      throw error;
    }
    if (updated === null) throw notFound('channel', id);
    await changed(id);
    sendJson(context, 200, channelToJson(updated));
  } },
  { method: 'DELETE', path: '/admin/channels/:id', handler: ({ storage, changed }) => async (context) => {
    const id = context.params.id ?? '';
    if (!(await storage.channels.delete(id))) throw notFound('channel', id);
    await changed(id);
    sendJson(context, 200, { id, object: 'channel', deleted: true });
  } },

  { method: 'POST', path: '/admin/models', handler: ({ services, storage, clock, changed }) => async (context) => {
    const body = await readAdminBody(context);
    const guardrails = await takeGuardrailNames(storage.guardrails, body);
    const model = modelFromInput(parseInput(createModelSchema, body), clock.now());
    checkFallbacks(model, model.fallbacks, (name) => services.catalog.model(name));
    try {
      await storage.models.create(model);
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', `A model with id '${model.id}' already exists; PATCH it instead.`, { param: 'id' });
      throw error;
    }
    await changed();
    if (guardrails !== undefined) await bindGuardrails(guardrailAdminOf(services), 'model', model.id, guardrails);
    const made: AdminModelJson = { ...modelToJson(model), ...(guardrails === undefined ? {} : { guardrails }) };
    sendJson(context, 201, made);
  } },
  { method: 'GET', path: '/admin/models', handler: ({ storage }) => async (context) => {
    sendJson(context, 200, pageJson(await storage.models.list(pageRequestFrom(context.query)), modelToJson));
  } },
  { method: 'GET', path: '/admin/models/:id', handler: ({ services, storage, bundledOnly }) => async (context) => {
    const id = context.params.id ?? '';
    const model = await storage.models.getById(id);
    const served = services.catalog.model(id);
    if (model === null) {
      const bundled = bundledOnly(id);
      if (bundled === null) throw notFound('model', id);
      sendJson(context, 200, modelToJson(bundled));
      return;
    }
    const read: AdminModelJson = { ...modelToJson(served?.id === id ? { ...served, ...model, priceSource: 'operator' } : model), guardrails: await boundGuardrails(storage.guardrails, 'model', id) };
    sendJson(context, 200, read);
  } },
  { method: 'PATCH', path: '/admin/models/:id', handler: ({ services, storage, clock, changed, bundledOnly }) => async (context) => {
    const id = context.params.id ?? '';
    const body = await readAdminBody(context);
    const guardrails = await takeGuardrailNames(storage.guardrails, body);
    const input = parseInput(updateModelSchema, body);
    let existing = await storage.models.getById(id);
    if (existing === null) {
      // Changing a bundled model stores the operator's own record of it, which overrides the bundled one from now on.
      const bundled = bundledOnly(id);
      if (bundled === null) throw notFound('model', id);
      existing = operatorCopy(bundled, clock.now());
      await storage.models.create(existing);
    }
    const patch = modelPatchFromInput(input, existing);
    if (patch.fallbacks !== undefined) checkFallbacks({ id, kind: patch.kind ?? existing.kind }, patch.fallbacks, (name) => services.catalog.model(name));
    const updated = await storage.models.update(id, patch, clock.now());
    if (updated === null) throw notFound('model', id);
    await changed();
    if (guardrails !== undefined) await bindGuardrails(guardrailAdminOf(services), 'model', id, guardrails);
    const changedModel: AdminModelJson = { ...modelToJson(updated), guardrails: guardrails ?? await boundGuardrails(storage.guardrails, 'model', id) };
    sendJson(context, 200, changedModel);
  } },
  { method: 'DELETE', path: '/admin/models/:id', handler: ({ services, storage, changed }) => async (context) => {
    const id = context.params.id ?? '';
    // A model other models fall back to stays while they name it, unless the bundled catalog still serves its id.
    const bundledUnderneath = [...services.catalog.bundledByProvider().values()].some((models) => models.some((model) => model.id === id));
    if (!bundledUnderneath) {
      const dependents = services.catalog.models().filter((model) => model.id !== id && model.fallbacks.includes(id)).map((model) => model.id);
      if (dependents.length > 0) {
        throw new GatewayError('conflict', `Model '${id}' is a fallback of ${dependents.map((name) => `'${name}'`).join(', ')}; remove it from their fallbacks first.`);
      }
    }
    if (!(await storage.models.delete(id))) throw notFound('model', id);
    await changed();
    sendJson(context, 200, { id, object: 'model', deleted: true });
  } },
]);
