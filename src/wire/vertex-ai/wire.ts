import { NO_PASS_THROUGH, type Wire } from '../wire.js';

/**
 * Google Vertex AI: Gemini and Anthropic bodies under Google Cloud's publisher URLs. No client speaks it, so every
 * request reaches it translated.
 */
export const vertexAIWire: Wire<never> = { name: 'vertex-ai', passThrough: NO_PASS_THROUGH };
