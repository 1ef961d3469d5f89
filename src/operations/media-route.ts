import { tmpdir } from 'node:os';
import type { AnswerReport } from '../billing/answer-report.js';
import { resolveModel } from './resolve-model.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ChannelRoute } from '../routing/catalog.js';
import type { GatewayServices } from '../services.js';
import type { Model, ModelKind } from '../domain/model-records.js';
import type { UpstreamAdapter } from '../upstreams/upstream-adapter.js';
import { meteredRoute, type MeteredCall } from './metered-frame.js';
import type { RouteHandler } from '../http/request-context.js';

/** What a media operation works with: the metered call of any billed endpoint. */
export type MediaCall = MeteredCall;

/** Where uploads are spooled while they are forwarded. */
export const SPOOL_DIRECTORY = tmpdir();

export interface MediaRouteOptions {
  /**
   * Multipart uploads of an endpoint serving this kind of model: refusals that need no body come before the upload
   * is read (see MeteredRouteOptions.refuseBeforeBody).
   */
  refuseBeforeUpload?: ModelKind;
}

/**
 * A media route (images, audio, moderations) in the metered frame. Uploads are held with `call.hold` and removed
 * when the request ends; a 413 closes the connection, since the rest of an upload that large is never read.
 */
export function mediaRoute(services: GatewayServices, protocol: string, handle: (call: MediaCall) => Promise<AnswerReport>, options: MediaRouteOptions = {}): RouteHandler {
  const closeOnTooLarge = async (call: MediaCall): Promise<AnswerReport> => {
    try {
      return await handle(call);
    } catch (error) {
      if (error instanceof GatewayError && error.status === 413) call.context.response.setHeader('connection', 'close');
      throw error;
    }
  };
  return meteredRoute(services, protocol, closeOnTooLarge, options.refuseBeforeUpload === undefined ? {} : { refuseBeforeBody: options.refuseBeforeUpload });
}

/** The public model, of the kind the endpoint serves, with its routes; 400 / 503 otherwise. */
export function resolveMediaModel(call: MediaCall, modelId: string, kind: ModelKind, endpoint: string): { model: Model; routes: readonly ChannelRoute[] } {
  return resolveModel(call.services, call.meter, modelId, { kind, endpoint });
}

/** No channel of the model offers the operation (e.g. image variations on a Gemini channel). */
export function noChannelFor(model: Model, operation: string): GatewayError {
  return new GatewayError('bad_request', `Model '${model.id}' has no channel that serves ${operation}.`, { param: 'model' });
}

/** True when the adapter speaks OpenAI's media wire. */
export function speaksOpenAIMedia(adapter: UpstreamAdapter): boolean {
  return adapter.media?.openAIMediaRequest !== undefined;
}
