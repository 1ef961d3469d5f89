import { costHeader, type AnswerPrice, type AnswerReport } from '../../billing/answer-report.js';
import { answerWithCost } from '../../codecs/answer-cost.js';
import type { ClientCodec } from '../../codecs/client-codec.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import { newId } from '../../shared/ids.js';
import { CallerGone } from '../caller-signal.js';
import type { ResponseSink } from '../response-sink.js';
import { answerStreamParts } from './answer-parts.js';
import type { CachedAnswer } from './cached-answer.js';

export interface ReplayOptions {
  stream: boolean;
  /** The model id the caller named, echoed in the answer. */
  model: string;
  /** Rate-limit and cache headers. */
  headers: Record<string, string>;
  /** The hit's price: the model's, at the share of the answer's cost a hit is billed. */
  price: AnswerPrice;
  now: number;
}

/**
 * Answers from the cache in the caller's protocol, through the same encoders the translated path uses: the stored
 * content, tool calls and usage, under a fresh id; streamed when the caller asked for a stream. Reported at the hit
 * price.
 */
export async function replayCachedAnswer(sink: ResponseSink, codec: ClientCodec, answer: CachedAnswer, options: ReplayOptions): Promise<AnswerReport> {
  const { usage } = answer;
  const { price } = options;
  const start = { id: newId('cache', options.now), model: options.model, created: Math.floor(options.now / 1000) };
  if (!options.stream) {
    const response: ChatResponse = { ...start, content: answer.content, finishReason: answer.finishReason, usage, warnings: [] };
    const cost = price.quoteUsd({ usage });
    sink.send({ status: 200, body: answerWithCost(codec, codec.encodeResponse(response, options.model), cost), contentType: 'application/json', headers: { ...options.headers, ...costHeader(cost) } });
    return { status: 200, usage, price };
  }
  // The finish part's encoding carries the cost of the stored usage.
  const encoder = codec.createStreamEncoder({ model: options.model, cost: price });
  let body = '';
  for (const part of answerStreamParts(answer, start)) body += encoder.encode(part);
  body += encoder.end();
  const gone = new CallerGone();
  const stopListening = sink.onCallerGone(() => gone.abort(new Error('client disconnected')));
  try {
    const client = sink.openStream(Object.assign({}, options.headers, { 'content-type': codec.streamContentType() }), gone, () => undefined);
    try {
      await client.write(body);
    } catch {
      // The caller left before taking the whole answer: nothing is billed.
      client.end();
      return { status: 499, errorCode: 'client_closed_request', price };
    }
    // The metered frame settles before the stream ends: the usage row exists once the caller has the whole answer.
    client.end();
    return { status: 200, usage, price };
  } finally {
    stopListening();
  }
}
