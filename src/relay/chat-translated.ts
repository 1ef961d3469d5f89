import type { ChatResponse } from '../ir/chat-response.js';
import type { StreamPart } from '../ir/stream-part.js';
import type { Usage } from '../ir/usage.js';
import type { UpstreamAdapter } from '../upstreams/upstream-adapter.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestGuard } from '../guardrail-policies/request-guard.js';
import { costHeader, type AnswerReport } from '../billing/answer-report.js';
import { answerWithCost } from '../codecs/answer-cost.js';
import { RunningTokenCount } from '../tokenize/running-token-count.js';
import { aborted, breakOffStream, endStream, localPromptTokens, memoized, stopStream, type OpenStream } from './chat-answer-ends.js';
import type { AnswerContext, ChatRelayRequest, RelayResult } from './chat-relay-request.js';
import { usageAtFirstByte, usageOfDelivered } from './delivered-usage.js';
import { failureClassOf, readWholeBody } from './upstream-call.js';

/** Another protocol: the upstream's answer is parsed into canonical form and encoded in the caller's. */
export async function relayTranslated(adapter: UpstreamAdapter, context: AnswerContext): Promise<RelayResult> {
  const { request } = context;
  const chat = request.chat();
  const model = request.answeringModel ?? chat.model;
  const warningHeader: Record<string, string> = chat.warnings.length > 0 ? { 'x-gateway-warnings': encodeURIComponent(chat.warnings.join('; ')).slice(0, 4000) } : {};
  // A successful answer that went without some hosted tool says so in a header and in its usage row's code.
  const dropped = chat.droppedHostedTools ?? [];
  if (dropped.length > 0) warningHeader['x-gateway-dropped-tools'] = dropped.join(', ');
  const successCode = dropped.length > 0 ? 'hosted_tool_dropped' : null;
  const answer: TranslatedAnswer = { chat, model, warningHeader, successCode };
  return request.stream ? await translatedStream(adapter, context, answer) : await translatedWhole(adapter, context, answer);
}

/** What both kinds of answer take from the canonical request: the model named, the warning headers, the success code. */
interface TranslatedAnswer {
  chat: ReturnType<ChatRelayRequest['chat']>;
  model: string;
  warningHeader: Record<string, string>;
  successCode: string | null;
}

/** A whole answer: parsed, checked by the output guard, encoded in the caller's protocol and sent once. */
async function translatedWhole(
  adapter: UpstreamAdapter,
  { request, response, signal, onFirstByte, recorder }: AnswerContext,
  { chat, model, warningHeader, successCode }: TranslatedAnswer,
): Promise<RelayResult> {
  const { sink, codec, price } = request;
  let usage: Usage;
  let encoded: string;
  let parsed: ChatResponse;
  try {
    parsed = adapter.parseChatResponse(await readWholeBody(response.body), chat);
    usage = parsed.usage;
    const refused = await checkAnswer(request.guard, parsed);
    if (refused !== null) return { kind: 'refused', error: refused, report: { status: refused.status, errorCode: refused.code, usage, price } };
    encoded = codec.encodeResponse(parsed, model);
  } catch (error) {
    if (signal.aborted) return aborted(request);
    return { kind: 'retry', failureClass: failureClassOf(error, true) };
  }
  onFirstByte();
  const cost = price.quoteUsd({ usage });
  sink.send({ status: 200, body: answerWithCost(codec, encoded, cost), contentType: 'application/json', headers: Object.assign({}, request.responseHeaders, warningHeader, request.guard?.headers(), costHeader(cost)) });
  const answered = parsed;
  const report: AnswerReport = { status: 200, errorCode: successCode, usage, price, answer: () => ({ model: answered.model, finishReasons: [answered.finishReason.raw ?? answered.finishReason.unified] }) };
  if (recorder !== null) {
    recorder.answer(parsed);
    recorder.complete();
  }
  return { kind: 'success', report };
}

/** A streamed answer: parts parsed, encoded and forwarded as they come; the opening held until the upstream accepted. */
async function translatedStream(
  adapter: UpstreamAdapter,
  { request, response, signal, onFirstByte, recorder, stop }: AnswerContext,
  { chat, model, warningHeader, successCode }: TranslatedAnswer,
): Promise<RelayResult> {
  const { sink, attempts, codec, price } = request;
  // The finish part's encoding ends with the final usage: the encoder gives it the cost of that usage.
  const encoder = codec.createStreamEncoder({ model, cost: price });
  const client = sink.openStream(Object.assign({}, request.responseHeaders, warningHeader, request.guard?.headers(), { 'content-type': codec.streamContentType() }), signal, onFirstByte);
  let usage: Usage | null = null;
  let streamError: { status: number; code: string } | null = null;
  // Counted as it goes: a checkpoint counts only the text delivered since the one before.
  const delivered = new RunningTokenCount();
  // Once the caller has the finish, the answer is complete: a later upstream fault must not turn it into an error.
  let finished = false;
  // Encoded parts before the first answer part (response start, usage), held so an in-band error after them is retried.
  let held: string | null = '';
  // The upstream accepted the request once a part other than an error arrived.
  let accepted = false;
  const promptTokens = memoized(() => localPromptTokens(request));
  const billedUsage = (): Promise<Usage | null> => usageOfDelivered({
    reported: usage,
    final: finished && usage !== null,
    accepted,
    deliveredTokens: () => delivered.total(),
    promptTokens,
  });
  request.checkpoint(price, async () => ({ usage: await billedUsage() }), () => ({ usage: usageAtFirstByte(usage, attempts.request.promptTokensEstimate) }));
  const facts = { model: null as string | null, finishReasons: [] as string[] };
  const stream: OpenStream = { request, response, client, signal, billedUsage, recorder, successCode, answer: () => facts };
  try {
    for await (const part of guardedStream(request.guard, adapter.parseChatStream(response.body, chat))) {
      if (!accepted && part.type !== 'error') accepted = true;
      recorder?.part(part);
      if (part.type === 'response-start') facts.model = part.model;
      else if (part.type === 'finish') facts.finishReasons.push(part.reason.raw ?? part.reason.unified);
      if (finished) {
        if (part.type === 'usage') usage = part.usage;
        continue;
      }
      if (part.type === 'usage') usage = part.usage;
      else if (part.type === 'finish') {
        finished = true;
        if (part.usage !== null) usage = part.usage;
      } else if (part.type === 'error') {
        // An upstream that fails in-band before anything reached the caller is retried like any other failure.
        if (held !== null && (part.status >= 500 || part.status === 429)) {
          response.discard();
          return { kind: 'retry', failureClass: part.status === 429 ? 'throttled' : 'stream_error' };
        }
        streamError = { status: part.status, code: part.code };
      } else if (part.type === 'text-delta' || part.type === 'tool-input-delta' || part.type === 'reasoning-delta') delivered.add(part.delta);
      else if (part.type === 'tool-input-start') delivered.add(part.toolName);
      const encoded = encoder.encode(part);
      if (held !== null) {
        if (part.type === 'response-start' || part.type === 'usage') {
          held += encoded;
          continue;
        }
        const opening = held + encoded;
        held = null;
        await client.write(opening);
        continue;
      }
      await client.write(encoded);
    }
    const ended = await endStream(stream, (held ?? '') + encoder.end(), streamError);
    return streamError === null ? ended : { kind: 'broken', failureClass: 'stream_error', report: ended.report };
  } catch (error) {
    if (stop?.reason != null && !signal.aborted) return await stopStream(stream, stop.reason);
    // A guardrail stopped the answer: the stream ends with its refusal, billed for what was delivered.
    if (isGuardrailBlock(error) && !signal.aborted) return await stopStream(stream, error);
    return await breakOffStream(stream, error, finished ? encoder.end() : null);
  }
}

/** Runs the output policies on a whole answer; the refusal when one blocks. */
async function checkAnswer(guard: RequestGuard | null | undefined, answer: ChatResponse): Promise<GatewayError | null> {
  if (guard == null || !guard.readsOutput) return null;
  try {
    await guard.checkAnswer(answer);
    return null;
  } catch (error) {
    if (isGuardrailBlock(error)) return error;
    throw error;
  }
}

/** The answer's stream through the output policies, when the request has any (or placeholders to restore). */
function guardedStream(guard: RequestGuard | null | undefined, parts: AsyncIterable<StreamPart>): AsyncIterable<StreamPart> {
  return guard != null && guard.readsOutput ? guard.guardStream(parts) : parts;
}

function isGuardrailBlock(error: unknown): error is GatewayError {
  return error instanceof GatewayError && error.code === 'guardrail_blocked';
}
