import type { Usage } from './usage.js';

/** Image generation in canonical form (OpenAI /v1/images/generations ⇄ Gemini image models' generateContent). */
export interface ImageGenerationRequest {
  model: string;
  prompt: string;
  /** Images wanted (1–10). */
  n: number;
  /** `WIDTHxHEIGHT` as OpenAI names it, or `auto`. */
  size?: string;
  quality?: string;
  /** Images to edit (image edits), inline. */
  inputImages?: GeneratedImage[];
  warnings: string[];
}

export interface GeneratedImage {
  /** The image bytes, base64. */
  base64: string;
  mimeType: string;
}

export interface ImageGenerationResponse {
  images: GeneratedImage[];
  /** Tokens, when the upstream reports them (Gemini image models do). */
  usage: Usage | null;
  /** Why no image came back (a safety block, a text-only answer), when none did. */
  refusal?: string;
}
