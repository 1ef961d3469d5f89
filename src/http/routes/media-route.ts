import { tmpdir } from 'node:os';
import { resolveModel } from './resolve-model.js';
import { GatewayError, toGatewayError } from '../../errors/gateway-error.js';
import { discardRequestBody } from '../../multipart/drain-request.js';
import type { MultipartForm } from '../../multipart/read-multipart-form.js';
import { admitBeforeBody, type BeforeBodyRequest } from '../../relay/admit-before-body.js';
import type { RelayDependencies } from '../../relay/relay-dependencies.js';
import { relayDependencies } from '../../relay/relay-dependencies.js';
import { RequestMeter } from '../../relay/request-meter.js';
import type { ResponseSink } from '../../relay/response-sink.js';
import type { ChannelRoute } from '../../routing/catalog.js';
import type { GatewayServices } from '../../services.js';
import type { Account, ApiKey, Model, ModelKind } from '../../domain/records.js';
import type { UpstreamAdapter } from '../../upstreams/upstream-adapter.js';
import { authenticate } from '../authenticate.js';
import { responseSink } from '../response-sink.js';
import type { RequestContext, RouteHandler } from '../request-context.js';

/** Everything a media route works with once the caller is authenticated. */
export interface MediaCall {
  context: RequestContext;
  services: GatewayServices;
  relay: RelayDependencies;
  key: ApiKey;
  account: Account;
  meter: RequestMeter;
  /** Where the relay writes the answer. */
  sink: ResponseSink;
  /** A parsed upload to remove when the request ends, however it ends. */
  holdForm(form: MultipartForm): MultipartForm;
}

/** Where uploads are spooled while they are forwarded. */
export const SPOOL_DIRECTORY = tmpdir();

export interface MediaRouteOptions {
  /**
   * Multipart uploads (up to tens of MB) of an endpoint serving this kind of model: what can be refused without the
   * body (no funds at all, a paused key, the model-independent RPM windows; relay/admit-before-body.ts) is refused
   * before the upload is read, and the upload is then read and dropped so the client gets the answer.
   */
  refuseBeforeUpload?: ModelKind;
}

/** Refusals that need no body, answered after the unread upload is dropped (never spooled). */
async function admitBeforeUpload(context: RequestContext, services: GatewayServices, request: BeforeBodyRequest): Promise<void> {
  try {
    await admitBeforeBody(services, request);
  } catch (error) {
    if (!(await discardRequestBody(context.request))) context.response.setHeader('connection', 'close');
    throw error;
  }
}

/**
 * The frame of every media route (images, audio, moderations): authenticate, meter, run, settle exactly once,
 * and remove spooled uploads afterwards (also when the client left or the upstream failed).
 */
export function mediaRoute(services: GatewayServices, protocol: string, handle: (call: MediaCall) => Promise<void>, options: MediaRouteOptions = {}): RouteHandler {
  const relay = relayDependencies(services);
  const { refuseBeforeUpload } = options;
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const meter = new RequestMeter(services, context.requestId, account.id, key.id, protocol, context.path, context.startedAt);
    const forms: MultipartForm[] = [];
    try {
      if (refuseBeforeUpload !== undefined) await admitBeforeUpload(context, services, { key, account, kind: refuseBeforeUpload, meter });
      await handle({ context, services, relay, key, account, meter, sink: responseSink(context), holdForm: (form) => (forms.push(form), form) });
    } catch (error) {
      const failure = toGatewayError(error);
      meter.finish({ status: failure.status, errorCode: failure.code });
      if (error instanceof GatewayError && error.status === 413) context.response.setHeader('connection', 'close');
      throw error;
    } finally {
      await Promise.all(forms.map((form) => form.dispose()));
    }
  };
}

/** The public model, of the kind the endpoint serves, with its routes; 400 / 503 otherwise. */
export function resolveMediaModel(call: MediaCall, modelId: string, kind: ModelKind, endpoint: string): { model: Model; routes: readonly ChannelRoute[] } {
  const resolved = resolveModel(call.services, call.meter, modelId);
  const { kind: actual } = resolved.model;
  if (actual !== kind) {
    throw new GatewayError('bad_request', `Model '${modelId}' is a ${actual} model; ${endpoint} takes ${kind === 'image' ? 'an image' : `a${kind === 'audio' ? 'n' : ''} ${kind}`} model.`, { param: 'model' });
  }
  return resolved;
}

/** No channel of the model offers the operation (e.g. image variations on a Gemini channel). */
export function noChannelFor(model: Model, operation: string): GatewayError {
  return new GatewayError('bad_request', `Model '${model.id}' has no channel that serves ${operation}.`, { param: 'model' });
}

/** True when the adapter speaks OpenAI's media wire. */
export function speaksOpenAIMedia(adapter: UpstreamAdapter): boolean {
  return adapter.media?.openAIMediaRequest !== undefined;
}
