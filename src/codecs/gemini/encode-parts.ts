import type { ContentPart, MediaSource } from '../../ir/message.js';
import { isJsonObject, type GeminiPart, type JsonObject } from '../../wire/gemini/gemini-wire.js';

const DATA_URL = /^data:([^;,]*)(?:;[^;,]*)*;base64,(.*)$/s;

/**
 * Canonical answer content → the parts of a `model` Content: text (with its thoughtSignature), thoughts as
 * `thought: true` text, function calls whole with their arguments as an object, media as inlineData / fileData.
 * Empty text without a signature is left out (Gemini never sends one), and so are Anthropic's redacted thinking
 * blocks and tool results, which have no place in a model turn.
 */
export function encodeModelParts(content: readonly ContentPart[]): GeminiPart[] {
  const parts: GeminiPart[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'text':
        if (part.text !== '' || part.signature !== undefined) parts.push(signed({ text: part.text }, part.signature));
        break;
      case 'reasoning':
        if (part.redactedData !== undefined) break;
        if (part.text !== '' || part.signature !== undefined) parts.push(signed({ text: part.text, thought: true }, part.signature));
        break;
      case 'tool-call':
        parts.push(signed({ functionCall: { id: part.id, name: part.name, args: argumentsObject(part.argumentsJson) } }, part.signature));
        break;
      case 'image':
      case 'file':
        parts.push(mediaPart(part.source));
        break;
      case 'tool-result':
      case 'web-search':
        // Searches reach a Gemini caller as the response's groundingMetadata, not as parts.
        break;
      default: {
        const unknown: never = part;
        throw new Error(`unknown content part ${JSON.stringify(unknown)}`);
      }
    }
  }
  return parts;
}

function signed(part: GeminiPart, signature: string | undefined): GeminiPart {
  return signature === undefined ? part : { ...part, thoughtSignature: signature };
}

/** Tool arguments as the JSON object Gemini carries; text that is not a JSON object becomes `{}`. */
export function argumentsObject(argumentsJson: string): JsonObject {
  if (argumentsJson.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(argumentsJson);
    return isJsonObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

export function mediaPart(source: MediaSource): GeminiPart {
  if (source.kind === 'base64') return { inlineData: { mimeType: source.mediaType, data: source.data } };
  const inline = DATA_URL.exec(source.url);
  if (inline !== null) return { inlineData: { mimeType: inline[1] || 'application/octet-stream', data: inline[2] ?? '' } };
  return { fileData: source.mediaType === undefined ? { fileUri: source.url } : { mimeType: source.mediaType, fileUri: source.url } };
}
