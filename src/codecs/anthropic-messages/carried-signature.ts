import type { ContentPart } from '../../ir/message.js';

/**
 * Gemini signs text and function calls (thoughtSignature), and Gemini 3 wants those signatures back on the next
 * turn. Anthropic's wire has a signature only on thinking blocks, which Anthropic clients echo back unchanged, so
 * the gateway carries such a signature in an empty thinking block right after the block it signs, marked with
 * this prefix, and puts it back on that block when the conversation returns.
 */
const CARRIED = 'ugw1.g.';

export function carriedSignature(signature: string): string {
  return CARRIED + signature;
}

/** The thinking block that carries the signature of the block before it. */
export function carrierBlock(signature: string): { type: 'thinking'; thinking: string; signature: string } {
  return { type: 'thinking', thinking: '', signature: carriedSignature(signature) };
}

/**
 * An assistant turn's parts with carrier thinking blocks folded back: each one's signature goes to the text or
 * tool call before it (dropped when there is none), and the carrier itself is removed.
 */
export function restoreCarriedSignatures(parts: ContentPart[]): ContentPart[] {
  if (!parts.some(isCarrier)) return parts;
  const out: ContentPart[] = [];
  for (const part of parts) {
    if (!isCarrier(part)) {
      out.push(part);
      continue;
    }
    const previous = out.at(-1);
    const signature = part.signature.slice(CARRIED.length);
    if (previous?.type === 'tool-call' || previous?.type === 'text') out[out.length - 1] = { ...previous, signature };
  }
  return out;
}

function isCarrier(part: ContentPart): part is Extract<ContentPart, { type: 'reasoning' }> & { signature: string } {
  return part.type === 'reasoning' && part.text === '' && part.signature?.startsWith(CARRIED) === true;
}
