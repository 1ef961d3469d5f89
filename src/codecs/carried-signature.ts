import type { ContentPart, ReasoningPart } from '../ir/message.js';
import { GATEWAY_STATE_MARKER, isGatewayState } from '../wire/gateway-state.js';

/**
 * Gemini signs the text and function calls it writes (thoughtSignature), and Gemini 3 wants a step's signature back
 * on its first function call. Anthropic's and OpenAI Responses' wires keep opaque state only on reasoning (a thinking
 * block's signature, a reasoning item's encrypted_content), which their clients send back unchanged and never show.
 * A translated answer carries such a signature, marked with this prefix, on the reasoning block right before the
 * block it signs, where a native answer has its reasoning: on the thoughts that precede it when they have no
 * signature of their own, else on an empty reasoning block. The answer still ends with its text or tool call.
 */
const NEXT = `${GATEWAY_STATE_MARKER}n.`;

/**
 * Earlier versions carried it on the Anthropic wire in an empty thinking block right AFTER the signed block; such
 * blocks still come back in conversations that started then, and are read as before.
 */
const PREVIOUS = `${GATEWAY_STATE_MARKER}g.`;

/** The signature of the block that follows, as the signature of the reasoning block before it. */
export function signatureOfNextBlock(signature: string): string {
  return NEXT + signature;
}

export function isSignatureOfNextBlock(value: string): boolean {
  return value.startsWith(NEXT);
}

/**
 * An assistant turn's parts with carried signatures put back on the blocks they sign: a marked reasoning part gives
 * its signature to the text or tool call right after it (or, in the earlier form, right before it), and is removed
 * unless it holds reasoning text, which stays without a signature. A signature whose block is gone is dropped, and
 * so is any other value the gateway marked: no provider can read it.
 */
export function restoreCarriedSignatures(parts: ContentPart[]): ContentPart[] {
  if (!parts.some((part) => part.type === 'reasoning' && isGatewayState(part.signature) && part.redactedData === undefined)) return parts;
  const out: ContentPart[] = [];
  let forNext: string | undefined;
  for (const part of parts) {
    const mark = part.type === 'reasoning' ? carried(part) : null;
    if (mark === null) {
      out.push(forNext !== undefined && (part.type === 'text' || part.type === 'tool-call') ? { ...part, signature: forNext } : part);
      forNext = undefined;
      continue;
    }
    const reasoning = part as ReasoningPart;
    forNext = undefined;
    if (mark.kind === 'next') forNext = mark.signature;
    else if (mark.kind === 'previous') {
      const previous = out.at(-1);
      if (previous?.type === 'tool-call' || previous?.type === 'text') out[out.length - 1] = { ...previous, signature: mark.signature };
    }
    if (reasoning.text !== '') out.push({ type: 'reasoning', text: reasoning.text });
  }
  return out;
}

type Carried = { kind: 'next' | 'previous'; signature: string } | { kind: 'unreadable' };

function carried(part: ReasoningPart): Carried | null {
  const signature = part.signature;
  if (signature === undefined || !isGatewayState(signature) || part.redactedData !== undefined) return null;
  if (signature.startsWith(NEXT)) return { kind: 'next', signature: signature.slice(NEXT.length) };
  if (signature.startsWith(PREVIOUS) && part.text === '') return { kind: 'previous', signature: signature.slice(PREVIOUS.length) };
  return { kind: 'unreadable' };
}
