import type { Channel } from '../../domain/records.js';

export type WireBody = Record<string, unknown>;

/** What a body quirk may know about the request it adjusts. */
export interface QuirkContext {
  channel: Channel;
  upstreamModel: string;
  /** Where dropped or changed fields are reported (the translated path); null on the pass-through path. */
  warnings: string[] | null;
}

/**
 * An OpenAI-compatible provider as configuration: where it lives, whether it needs a key, headers it wants, and
 * one hook for the chat body it would otherwise reject (run on the translated and the pass-through path alike).
 */
export interface OpenAICompatiblePreset {
  /** The base URL (with its `/v1`-style root) used when the channel gives none. */
  defaultBaseUrl: string;
  /** Extra headers from the channel's settings. */
  headers?(channel: Channel): Record<string, string>;
  /** Rewrites a chat-completions body in place into what the provider accepts. */
  adjustChatBody?(body: WireBody, context: QuirkContext): void;
  /** A caller's body is parsed for `adjustChatBody` only when its text matches (absent: always). */
  adjustsWhen?: RegExp;
}

export function reportQuirk(context: QuirkContext, warning: string): void {
  const warnings = context.warnings;
  if (warnings !== null && !warnings.includes(warning)) warnings.push(warning);
}

/** Removes `fields` from the body, reporting each one that was there. */
export function dropFields(body: WireBody, fields: readonly string[], context: QuirkContext, why: string): void {
  for (const field of fields) {
    if (body[field] === undefined) continue;
    delete body[field];
    reportQuirk(context, `'${field}' was dropped: ${why}`);
  }
}

export function messagesOf(body: WireBody): WireBody[] {
  return Array.isArray(body.messages) ? (body.messages as unknown[]).filter((message): message is WireBody => message !== null && typeof message === 'object') : [];
}
