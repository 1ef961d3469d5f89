import type { ClientCodec } from '../../codecs/client-codec.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import { newId } from '../../shared/ids.js';
import { CallerGone } from '../caller-signal.js';
import type { RequestMeter } from '../request-meter.js';
import type { ResponseSink } from '../response-sink.js';
import { answerStreamParts } from './answer-parts.js';
import type { CachedAnswer } from './cached-answer.js';

export interface ReplayOptions {
  stream: boolean;
  /** The model id the caller named, echoed in the answer. */
  model: string;
  /** Rate-limit and cache headers. */
  headers: Record<string, string>;
  /** The fraction of the answer's cost a hit is billed, in basis points. */
  hitPriceBasisPoints: number;
  now: number;
}

/**
 * Answers from the cache in the caller's protocol, through the same encoders the translated path uses: the stored
 * content, tool calls and usage, under a fresh id; streamed when the caller asked for a stream. Billed at the hit price.
 */
export async function replayCachedAnswer(sink: ResponseSink, meter: RequestMeter, codec: ClientCodec, answer: CachedAnswer, options: ReplayOptions): Promise<void> {
  meter.answeredFromCache(options.hitPriceBasisPoints);
  const { usage } = answer;
  const start = { id: newId('cache', options.now), model: options.model, created: Math.floor(options.now / 1000) };
  if (!options.stream) {
    const response: ChatResponse = { ...start, content: answer.content, finishReason: answer.finishReason, usage, warnings: [] };
    const priced = meter.priced(codec.encodeResponse(response, options.model), { usage }, codec.usageKey);
    meter.markFirstByte();
    sink.send({ status: 200, body: priced.body, contentType: 'application/json', headers: { ...options.headers, ...priced.headers } });
    meter.finish({ status: 200, usage });
    return;
  }
  const encoder = codec.createStreamEncoder({ model: options.model });
  const costKey = codec.streamUsageKey();
  let body = '';
  for (const part of answerStreamParts(answer, start)) {
    const encoded = encoder.encode(part);
    body += part.type === 'finish' && costKey !== null ? meter.withCostInUsage(encoded, usage, costKey) : encoded;
  }
  body += encoder.end();
  const gone = new CallerGone();
  const stopListening = sink.onCallerGone(() => gone.abort(new Error('client disconnected')));
  try {
    const client = sink.openStream(Object.assign({}, options.headers, { 'content-type': codec.streamContentType() }), gone, () => meter.markFirstByte());
    try {
      await client.write(body);
    } catch {
      // The caller left before taking the whole answer: nothing is billed.
      meter.finish({ status: 499, errorCode: 'client_closed_request' });
      client.end();
      return;
    }
    // The usage row exists once the caller has the whole answer, as on the relayed paths.
    meter.finish({ status: 200, usage });
    client.end();
  } finally {
    stopListening();
  }
}
