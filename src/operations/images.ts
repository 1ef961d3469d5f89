import { readFile } from 'node:fs/promises';
import { badRequest } from '../codecs/openai-chat/bad-request.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ImageVariant } from '../billing/compute-cost.js';
import type { ImageGenerationRequest, ImageGenerationResponse } from '../ir/image.js';
import type { Usage } from '../ir/usage.js';
import { AnswerPrice, withReport, type AnswerReport } from '../billing/answer-report.js';
import { readMultipartForm, type MultipartForm } from '../multipart/read-multipart-form.js';
import { relayUnary, type UnaryExchange } from '../relay/relay-unary.js';
import type { ChannelRoute } from '../routing/catalog.js';
import type { GatewayServices } from '../services.js';
import type { Model } from '../domain/model-records.js';
import { estimateTextTokens } from '../shared/estimate-tokens.js';
import type { MediaBody } from '../upstreams/media-capabilities.js';
import { readOpenAIMediaUsage, type OpenAIMediaUsage } from '../upstreams/openai/openai-media-usage.js';
import type { UpstreamAdapter } from '../upstreams/upstream-adapter.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import { optionalChoice, optionalInteger, requiredString, upstreamForm, upstreamJson } from './media-fields.js';
import { mediaRoute, noChannelFor, resolveMediaModel, SPOOL_DIRECTORY, speaksOpenAIMedia, type MediaCall } from './media-route.js';
import { guardCallerTexts, guardFormField, guardHeaders } from './guard-texts.js';
import { moderationCheck } from './moderation-check.js';

/** gpt-image-1 takes up to 16 input images of up to 50 MB each, plus a mask. */
const IMAGE_FORM_LIMITS = { maxFileBytes: 50 * 1024 * 1024, maxFiles: 17, fileFields: new Set(['image', 'image[]', 'mask']), maxFields: 32, maxFieldBytes: 64 * 1024, spoolDirectory: SPOOL_DIRECTORY };
/**
 * Reservation bound for token-priced image models: 10 000 tokens per image produced or uploaded (gpt-image-1's
 * largest high-quality output is 6 240 tokens; Gemini image models report 1 290 per image).
 */
export const IMAGE_TOKENS_BOUND = 10_000;
const MAX_IMAGES = 10;

type ImageAnswer = { kind: 'openai'; body: Buffer; usage: OpenAIMediaUsage } | { kind: 'generated'; response: ImageGenerationResponse };

function tokens(input: number, output: number): Usage {
  return { input: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } };
}

async function admitImages(call: MediaCall, model: Model, n: number, promptTokens: number, inputImages: number, imageVariant: ImageVariant): Promise<Readonly<Record<string, string>>> {
  return (await call.admit({
    model,
    estimatedTokens: promptTokens,
    shape: { promptTokens },
    maxUsage: { images: n, imageVariant, tokens: tokens(promptTokens + inputImages * IMAGE_TOKENS_BOUND, n * IMAGE_TOKENS_BOUND) },
  })).rateLimitHeaders;
}

/** The size and quality an image request asks for (DALL·E bills each its own price). */
function imageVariantOf(size: string | undefined, quality: string | undefined): ImageVariant {
  return { ...(size === undefined ? {} : { size }), ...(quality === undefined ? {} : { quality }) };
}

/** Pass-through of an OpenAI-wire media body; the answer is relayed as it came, its usage read. */
function openAIImageExchange(path: '/images/generations' | '/images/edits' | '/images/variations', body: (upstreamModel: string) => MediaBody): UnaryExchange<ImageAnswer> {
  return {
    request(adapter, route, credential) {
      const build = adapter.media?.openAIMediaRequest;
      return build === undefined ? null : build(route.channel, credential, path, route.upstreamModel, body(route.upstreamModel));
    },
    parse: (_adapter, _route, upstreamBody) => ({ kind: 'openai', body: upstreamBody, usage: readOpenAIMediaUsage(upstreamBody) }),
  };
}

/**
 * OpenAI-wire channels get the caller's request (`openAI`, null: not for this call); channels with their own image
 * generation (Gemini) get one image a call, when `request` says what to send them (null: skip them).
 */
function generationExchange(openAI: UnaryExchange<ImageAnswer> | null, request: ImageGenerationRequest | null): UnaryExchange<ImageAnswer> {
  return {
    request(adapter: UpstreamAdapter, route, credential) {
      if (speaksOpenAIMedia(adapter)) return openAI === null ? null : openAI.request(adapter, route, credential);
      const generation = adapter.media?.imageGeneration;
      return generation === undefined || request === null ? null : generation.buildRequest(route.channel, credential, { ...request, n: 1 }, route.upstreamModel);
    },
    parse(adapter, route, upstreamBody) {
      if (speaksOpenAIMedia(adapter) && openAI !== null) return openAI.parse(adapter, route, upstreamBody);
      const generation = adapter.media?.imageGeneration as NonNullable<NonNullable<UpstreamAdapter['media']>['imageGeneration']>;
      return { kind: 'generated', response: generation.parseResponse(upstreamBody, request as ImageGenerationRequest) };
    },
  };
}

function sumUsage(responses: readonly ImageGenerationResponse[]): Usage | null {
  let total: Usage | null = null;
  for (const { usage } of responses) {
    if (usage === null) continue;
    total ??= tokens(0, 0);
    total.input.total += usage.input.total;
    total.input.noCache += usage.input.noCache;
    total.input.cacheRead += usage.input.cacheRead;
    total.output.total += usage.output.total;
    total.output.text += usage.output.text;
    total.output.reasoning += usage.output.reasoning;
  }
  return total;
}

/**
 * Images an upstream generated with its own API → OpenAI's ImagesResponse. `b64_json` by default; with
 * `response_format: "url"` each image is a `data:` URL (the gateway stores no images, so it has no URL to give).
 */
export function encodeGeneratedImages(responses: readonly ImageGenerationResponse[], responseFormat: 'url' | 'b64_json' | undefined, created: number): string {
  const images = responses.flatMap((response) => response.images);
  const usage = sumUsage(responses);
  const data = images.map((image) => (responseFormat === 'url' ? { url: `data:${image.mimeType};base64,${image.base64}` } : { b64_json: image.base64 }));
  const format = images[0]?.mimeType.replace(/^image\//, '');
  return JSON.stringify({
    created,
    data,
    ...(format === undefined ? {} : { output_format: format === 'jpg' ? 'jpeg' : format }),
    ...(usage === null ? {} : {
      usage: {
        input_tokens: usage.input.total,
        input_tokens_details: { text_tokens: usage.input.total, image_tokens: 0 },
        output_tokens: usage.output.total,
        total_tokens: usage.input.total + usage.output.total,
      },
    }),
  });
}

function answerOpenAIImages(call: MediaCall, answer: { body: Buffer; usage: OpenAIMediaUsage }, headers: Readonly<Record<string, string>>, imageVariant: ImageVariant, price: AnswerPrice): AnswerReport {
  const outcome = { usage: answer.usage.tokens, billable: { images: answer.usage.images ?? 0, imageVariant } };
  call.sink.send({ status: 200, body: answer.body, contentType: 'application/json', headers: { ...headers, ...price.priced(answer.body, outcome, null).headers } });
  return { status: 200, ...outcome, price };
}

interface ImagesRelay {
  model: Model;
  routes: readonly ChannelRoute[];
  headers: Readonly<Record<string, string>>;
  openAI: UnaryExchange<ImageAnswer>;
  /** What channels with their own image generation get; null when they cannot take this request. */
  request: ImageGenerationRequest | null;
  responseFormat: 'url' | 'b64_json' | undefined;
  operation: string;
  /** The size and quality asked for, which per-image prices depend on. */
  imageVariant: ImageVariant;
}

/**
 * Relays an image request to the first channel that takes it, and answers. OpenAI-wire answers go back as they are;
 * Gemini image models make one image a call, so the others are asked for in parallel on image-generating channels
 * and the images are encoded as OpenAI's ImagesResponse.
 */
async function relayImages(call: MediaCall, relay: ImagesRelay): Promise<AnswerReport> {
  const { routes, request } = relay;
  const price = new AnswerPrice(relay.model);
  const options = { model: relay.model.id };
  const first = await relayUnary(call.relay, call.sink, call.attempts, routes, generationExchange(relay.openAI, request), options);
  if (first === null) throw noChannelFor(relay.model, relay.operation);
  if (first.kind === 'openai') return answerOpenAIImages(call, first, relay.headers, relay.imageVariant, price);
  const n = request?.n ?? 1;
  const another = (): Promise<ImageAnswer | null> => relayUnary(call.relay, call.sink, call.attempts, routes, generationExchange(null, request), options);
  // Prompts alone go in parallel; edits carry their images inline (up to ~19 MB a body), so they go one at a time.
  const more: Array<ImageAnswer | null> = [];
  if (request?.inputImages === undefined) more.push(...(await Promise.all(Array.from({ length: n - 1 }, another))));
  else for (let index = 1; index < n; index += 1) more.push(await another());
  const responses = [first.response, ...more.flatMap((answer) => (answer?.kind === 'generated' ? [answer.response] : []))];
  const usage = sumUsage(responses);
  const produced = responses.reduce((sum, response) => sum + response.images.length, 0);
  if (produced === 0) {
    // The upstream billed the prompt: the refusal is reported with it.
    const refusal = new GatewayError('bad_request', `The upstream model produced no image: ${first.response.refusal ?? 'no reason given'}.`, { param: 'prompt' });
    throw withReport(refusal, { status: 400, errorCode: 'bad_request', usage, billable: { images: 0, imageVariant: relay.imageVariant }, price });
  }
  const warnings: Record<string, string> = request?.quality === undefined ? {} : { 'x-gateway-warnings': encodeURIComponent("'quality' has no equivalent on this model and was ignored.") };
  const outcome = { usage, billable: { images: produced, imageVariant: relay.imageVariant } };
  const body = encodeGeneratedImages(responses, relay.responseFormat, Math.floor(call.services.clock.now() / 1000));
  call.sink.send({ status: 200, body, contentType: 'application/json', headers: { ...relay.headers, ...warnings, ...price.priced(body, outcome, null).headers } });
  return { status: 200, ...outcome, price };
}

/** POST /v1/images/generations (JSON): OpenAI-wire channels as they are, Gemini image models translated. */
export function imageGenerationsRoute(services: GatewayServices): RouteHandler {
  const moderate = moderationCheck(services);
  return mediaRoute(services, 'openai-images', async (call) => {
    const body = await readJsonObject(call.context, services.config.maxBodyBytes);
    const modelId = requiredString(body.model, 'model');
    let prompt = requiredString(body.prompt, 'prompt');
    const n = optionalInteger(body.n, 'n', 1, MAX_IMAGES) ?? 1;
    const size = body.size === undefined || body.size === null ? undefined : requiredString(body.size, 'size');
    const quality = body.quality === undefined || body.quality === null ? undefined : requiredString(body.quality, 'quality');
    const responseFormat = optionalChoice(body.response_format, 'response_format', ['url', 'b64_json'] as const);
    if (body.stream === true) throw badRequest('stream', 'Streaming image generation is not supported; leave stream unset.');
    const { model, routes } = resolveMediaModel(call, modelId, 'image', 'POST /v1/images/generations');
    // Input guardrails before anything is held or sent: the upstream draws from the masked prompt.
    const asked = { text: prompt };
    const guard = await guardCallerTexts(call, moderate, model.id, () => [asked]);
    if (asked.text !== prompt) body.prompt = prompt = asked.text;
    const imageVariant = imageVariantOf(size, quality);
    const headers = { ...(await admitImages(call, model, n, estimateTextTokens(prompt), 0, imageVariant)), ...guardHeaders(guard) };
    const request: ImageGenerationRequest = { model: model.id, prompt, n, warnings: [], ...(size === undefined ? {} : { size }), ...(quality === undefined ? {} : { quality }) };
    const openAI = openAIImageExchange('/images/generations', (upstreamModel) => upstreamJson(body, upstreamModel));
    return relayImages(call, { model, routes, headers, openAI, request, responseFormat, operation: 'image generation', imageVariant });
  });
}

function imageFiles(form: MultipartForm, single: boolean): number {
  const images = form.files.filter((file) => file.field === 'image' || file.field === 'image[]');
  if (images.length === 0) throw badRequest('image', "An image file is required in the form field 'image'.");
  if (single && images.length > 1) throw badRequest('image', 'Image variations take exactly one image.');
  if (single && form.files.some((file) => file.field === 'mask')) throw badRequest('mask', 'Image variations take no mask.');
  return images.length;
}

/** Inline images Gemini takes in one request (20 MB with the rest; base64 grows them by a third). */
export const GEMINI_INLINE_IMAGE_BYTES = 14 * 1024 * 1024;

/**
 * The edit for channels that generate images themselves (Gemini): the uploaded images inline before the prompt. Read
 * from disk only when such a channel serves the model, the images fit Gemini's inline limit, and there is no mask
 * (Gemini has none); otherwise null and those channels are skipped.
 */
async function inlineEditRequest(call: MediaCall, routes: readonly ChannelRoute[], form: MultipartForm, request: ImageGenerationRequest): Promise<ImageGenerationRequest | null> {
  const generates = routes.some((route) => call.relay.adapters.get(route.channel.type)?.media?.imageGeneration !== undefined);
  const images = form.files.filter((file) => file.field === 'image' || file.field === 'image[]');
  const bytes = images.reduce((sum, file) => sum + file.size, 0);
  if (!generates || bytes > GEMINI_INLINE_IMAGE_BYTES || form.files.some((file) => file.field === 'mask')) return null;
  const inputImages = await Promise.all(images.map(async (file) => ({ base64: (await readFile(file.path)).toString('base64'), mimeType: file.contentType.startsWith('image/') ? file.contentType : 'image/png' })));
  return { ...request, inputImages };
}

/**
 * POST /v1/images/edits and /v1/images/variations (multipart): to OpenAI-wire channels, the upload streamed from
 * disk; edits also to Gemini image models, the images inline.
 */
function multipartImageRoute(services: GatewayServices, path: '/images/edits' | '/images/variations'): RouteHandler {
  const variations = path === '/images/variations';
  const moderate = moderationCheck(services);
  return mediaRoute(services, 'openai-images', async (call) => {
    const form = call.hold(await readMultipartForm(call.context.request, IMAGE_FORM_LIMITS));
    const modelId = requiredString(form.field('model'), 'model');
    if (!variations) requiredString(form.field('prompt'), 'prompt');
    const inputImages = imageFiles(form, variations);
    const n = optionalInteger(form.field('n'), 'n', 1, MAX_IMAGES) ?? 1;
    const responseFormat = optionalChoice(form.field('response_format'), 'response_format', ['url', 'b64_json'] as const);
    if (form.field('stream') === 'true') throw badRequest('stream', 'Streaming image edits are not supported; leave stream unset.');
    const { model, routes } = resolveMediaModel(call, modelId, 'image', `POST /v1${path}`);
    // Input guardrails before anything is held or sent: an edit's prompt masked in the form the upstream gets.
    const guard = variations ? null : await guardFormField(call, moderate, model.id, form, 'prompt');
    const prompt = variations ? '' : (form.field('prompt') as string);
    const size = form.field('size');
    const imageVariant = imageVariantOf(size, form.field('quality'));
    const headers = { ...(await admitImages(call, model, n, estimateTextTokens(prompt), inputImages, imageVariant)), ...guardHeaders(guard) };
    const openAI = openAIImageExchange(path, (upstreamModel) => upstreamForm(form, upstreamModel));
    const request = variations ? null : await inlineEditRequest(call, routes, form, { model: model.id, prompt, n, warnings: [], ...(size === undefined ? {} : { size }) });
    return relayImages(call, { model, routes, headers, openAI, request, responseFormat, operation: variations ? 'image variations' : 'image edits', imageVariant });
  }, { refuseBeforeUpload: 'image' });
}

export function imageEditsRoute(services: GatewayServices): RouteHandler {
  return multipartImageRoute(services, '/images/edits');
}

export function imageVariationsRoute(services: GatewayServices): RouteHandler {
  return multipartImageRoute(services, '/images/variations');
}
