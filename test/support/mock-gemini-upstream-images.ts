/**
 * Image output of the mock Gemini upstream, as Gemini image models (`gemini-2.5-flash-image`,
 * `gemini-3-pro-image-preview`, any model whose name contains `image`) answer `generateContent`: one image as an
 * `inlineData` part (a text part too when TEXT is among the response modalities), 1 290 output tokens an image, and
 * `promptFeedback.blockReason` without candidates when the prompt is blocked (the mock blocks prompts containing
 * "forbidden").
 */
import { promptTokens } from './mock-gemini-upstream-answers.js';
import type { GenerateRequest } from './mock-gemini-upstream-validate.js';
import { field, invalid, isObject, type JsonObject } from './mock-gemini-upstream-wire.js';

/** Output tokens Gemini reports per generated 1024×1024 image. */
export const GEMINI_IMAGE_OUTPUT_TOKENS = 1290;
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const ASPECT_RATIOS = new Set(['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9']);

export function isImageModel(name: string): boolean {
  return name.includes('image');
}

function promptText(request: GenerateRequest): string {
  return request.contents.flatMap((content) => content.parts.map((part) => (part.kind === 'text' ? part.text : ''))).join(' ');
}

export function imageGenerationAnswer(body: unknown, request: GenerateRequest, model: string, responseId: string): JsonObject {
  const config = isObject(body) ? field(body, 'generationConfig') : undefined;
  const modalities = isObject(config) ? field(config, 'responseModalities') : undefined;
  const imageConfig = isObject(config) ? field(config, 'imageConfig') : undefined;
  if (isObject(imageConfig)) {
    const ratio = field(imageConfig, 'aspectRatio');
    if (ratio !== undefined && (typeof ratio !== 'string' || !ASPECT_RATIOS.has(ratio))) throw invalid(`* GenerateContentRequest.generation_config.image_config.aspect_ratio: unsupported aspect ratio ${String(ratio)}.\n`);
  }
  const wanted = Array.isArray(modalities) ? modalities : ['TEXT', 'IMAGE'];
  const prompt = promptTokens(request);
  const usage = (candidates: number): JsonObject => ({
    promptTokenCount: prompt,
    ...(candidates > 0 ? { candidatesTokenCount: candidates } : {}),
    totalTokenCount: prompt + candidates,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
    ...(candidates > 0 ? { candidatesTokensDetails: [{ modality: 'IMAGE', tokenCount: candidates }] } : {}),
  });
  if (/forbidden/i.test(promptText(request))) return { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: usage(0), modelVersion: model, responseId };
  const parts: JsonObject[] = [];
  if (wanted.includes('TEXT')) parts.push({ text: 'Here is the image you asked for.' });
  if (wanted.includes('IMAGE')) parts.push({ inlineData: { mimeType: 'image/png', data: PNG } });
  const images = wanted.includes('IMAGE') ? 1 : 0;
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage(images * GEMINI_IMAGE_OUTPUT_TOKENS + (wanted.includes('TEXT') ? 8 : 0)),
    modelVersion: model,
    responseId,
  };
}
