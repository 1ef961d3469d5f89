import type { ClientCodec, ForwardingCodec } from '../client-codec.js';
import type { AnswerCost } from '../../wire/usage-cost.js';
import { responsesWire } from '../../wire/responses/wire.js';
import { answerFactsOfJson } from '../../wire/answer-facts.js';
import { responsesAnswerFacts } from '../../wire/responses/answer-facts.js';
import { decodeResponsesRequest } from './decode-request.js';
import { encodeResponsesStreamError } from './encode-error.js';
import { encodeResponsesResponse } from './encode-response.js';
import { ResponsesStreamEncoder } from './encode-stream.js';
import { echoOf } from './response-object.js';
import { withoutAddedUser } from './caller-echo.js';
import { wantsSearchSources } from './encode-response.js';
import { findResponsesUsageInJson } from '../../wire/responses/usage.js';
import { ToolNamespaces } from './tool-namespaces.js';
import { ResponsesPassThroughObserver } from './stream-usage-observer.js';
import type { JsonObject } from './wire-values.js';
import { withStreamCost } from '../answer-cost.js';

/** The parts of the Responses codec's pass-through that no request changes, made once. */
const PASS_THROUGH_READERS = {
  headers: [] as readonly string[],
  streamPassesThrough: () => true,
  usageFromResponseBody: (responseBody: Buffer) => findResponsesUsageInJson(responseBody),
  answerFactsOfBody: (answer: Buffer) => answerFactsOfJson(answer, responsesAnswerFacts),
};

const streamContentType = (): string => 'text/event-stream; charset=utf-8';
// The response's own usage object (`response.usage` in the completed event). Only `user` and `metadata` follow it,
// whose values are strings: were a metadata key named `usage`, the cost would go in the header alone.
const streamUsageKey = (): string => 'usage';
const decodeRequest: ClientCodec['decodeRequest'] = (requestBody, hints) => decodeResponsesRequest(requestBody, hints.stream === undefined ? {} : { stream: hints.stream });

/**
 * The OpenAI Responses client protocol (POST /v1/responses), bound to one request: a response object echoes the
 * request's settings, and an error event after a break continues the stream's sequence numbers, so the codec is
 * built per request (a handful of closures). Channels that serve the Responses API natively (OpenAI) get the
 * caller's body as it came (its wire is served on OpenAI's); every other channel gets the canonical request.
 */
export function openAIResponsesCodec(body: JsonObject, added: ReadonlySet<string> = new Set()): ForwardingCodec {
  // Answers echo the caller's request: a `user` the gateway added (the header-named customer) is not echoed.
  const addedUser = added.has('user');
  const echoed: JsonObject = addedUser ? Object.fromEntries(Object.entries(body).filter(([name]) => name !== 'user')) : body;
  let encoder: ResponsesStreamEncoder | null = null;
  let observer: ResponsesPassThroughObserver | null = null;
  // Only translated answers need the namespace map, so it is built on first use.
  let namespaces: ToolNamespaces | null = null;
  const toolNamespaces = (): ToolNamespaces => (namespaces ??= new ToolNamespaces(body.tools));
  const createObserver = (cost?: AnswerCost): ResponsesPassThroughObserver => (observer = new ResponsesPassThroughObserver().costing(cost, streamUsageKey()));
  return {
    wire: responsesWire,
    usageKey: 'usage',
    streamUsageKey,
    streamContentType,
    decodeRequest,
    encodeResponse: (response, model) => encodeResponsesResponse(response, model, echoed, toolNamespaces()),
    createStreamEncoder: (options) => withStreamCost((encoder = new ResponsesStreamEncoder(options.model, echoOf(echoed), toolNamespaces(), wantsSearchSources(body))), options.cost, streamUsageKey()),
    encodeStreamError: (error) => encoder?.fail(error) ?? encodeResponsesStreamError(error, observer?.nextSequenceNumber() ?? 0),
    passThrough: addedUser
      ? { ...PASS_THROUGH_READERS, createObserver, callerAnswer: withoutAddedUser, callerStreamEvent: withoutAddedUser }
      : { ...PASS_THROUGH_READERS, createObserver },
  };
}

export { decodeResponsesRequest, validateResponsesRequest, type ResponsesEnvelope } from './decode-request.js';
export { encodeResponsesResponse } from './encode-response.js';
export { ResponsesStreamEncoder } from './encode-stream.js';
export { ResponsesPassThroughObserver } from './stream-usage-observer.js';
