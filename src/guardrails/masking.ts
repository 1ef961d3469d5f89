/**
 * Masking of detected spans. Irreversible masking writes the kind (`[EMAIL]`); reversible masking writes a numbered
 * placeholder (`[EMAIL_1]`) and keeps the original in a vault that lives for one request: the same value gets the same
 * placeholder, the placeholders go upstream, and `restore` puts the originals back into the answer for the caller.
 * The vault's values never leave the gateway.
 */
import type { Span } from './detectors.js';

export function placeholderLabel(kind: string): string {
  return kind.toUpperCase();
}

/** The originals behind one request's placeholders. */
export class MaskVault {
  private readonly byPlaceholder = new Map<string, string>();
  private readonly byValue = new Map<string, string>();
  private readonly counters = new Map<string, number>();

  placeholderFor(kind: string, value: string): string {
    const key = `${kind}\u0000${value}`;
    const known = this.byValue.get(key);
    if (known !== undefined) return known;
    const label = placeholderLabel(kind);
    const n = (this.counters.get(label) ?? 0) + 1;
    this.counters.set(label, n);
    const placeholder = `[${label}_${n}]`;
    this.byValue.set(key, placeholder);
    this.byPlaceholder.set(placeholder, value);
    return placeholder;
  }

  original(placeholder: string): string | undefined {
    return this.byPlaceholder.get(placeholder);
  }

  get size(): number {
    return this.byPlaceholder.size;
  }
}

/** Replaces the spans (sorted, not overlapping) with `[KIND]`, or with vault placeholders when a vault is given. */
export function applyMask(text: string, spans: readonly Span[], vault?: MaskVault): string {
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start);
    out += vault ? vault.placeholderFor(span.kind, text.slice(span.start, span.end)) : `[${placeholderLabel(span.kind)}]`;
    at = span.end;
  }
  return out + text.slice(at);
}

const PLACEHOLDER = /\[[A-Z_]{1,40}_\d{1,6}\]/g;
/** The longest placeholder `restore` recognises: a stream holds back at most this much of an unfinished one. */
export const MAX_PLACEHOLDER_LENGTH = 1 + 40 + 1 + 6 + 1;

/** Puts the vault's originals back in place of its placeholders; text that only looks like one is left alone. */
export function restore(text: string, vault: MaskVault): string {
  if (vault.size === 0 || !text.includes('[')) return text;
  return text.replace(PLACEHOLDER, (placeholder) => vault.original(placeholder) ?? placeholder);
}

/**
 * Restores placeholders in a streamed answer whose chunks may split one (`[EMA` + `IL_1]`). Text is released at once
 * except a tail that could still be the start of a placeholder, at most MAX_PLACEHOLDER_LENGTH - 1 characters.
 */
export class StreamRestorer {
  #tail = '';

  constructor(private readonly vault: MaskVault) {}

  /** Characters held back as a possibly unfinished placeholder (fewer than MAX_PLACEHOLDER_LENGTH). */
  get held(): number {
    return this.#tail.length;
  }

  push(chunk: string): string {
    const text = this.#tail + chunk;
    const cut = unfinishedPlaceholderStart(text);
    this.#tail = text.slice(cut);
    return restore(text.slice(0, cut), this.vault);
  }

  /** The rest, at the end of the stream. */
  end(): string {
    const rest = this.#tail;
    this.#tail = '';
    return restore(rest, this.vault);
  }
}

/** Where a tail that may still grow into a placeholder starts (the text's length when there is none). */
function unfinishedPlaceholderStart(text: string): number {
  const open = text.lastIndexOf('[');
  if (open < 0 || text.length - open >= MAX_PLACEHOLDER_LENGTH) return text.length;
  return /^\[[A-Z_]*(?:_\d*)?$/.test(text.slice(open)) ? open : text.length;
}
