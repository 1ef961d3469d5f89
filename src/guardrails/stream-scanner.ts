/**
 * Output checks on a streamed answer. Each chunk is appended to a held tail; everything but the last `window`
 * characters (the longest match any detector can make, plus one character of look-ahead) is released at once,
 * masked, and a match that starts before the release point is released whole. So a match that straddles chunks is
 * caught, and the stream is never held back by more than the window (plus the rest of a match being released).
 * Matches are searched with the already released text before them as context, so chunking changes nothing.
 *
 * Its memory is bounded by its detectors, not by the stream: between chunks it keeps at most `window` held characters
 * and `CONTEXT_CHARS` of released look-behind (`retained` ≤ `window` + `CONTEXT_CHARS`), however long the stream.
 */
import { detect, type Detector, type Span } from './detectors.js';
import { applyMask, type MaskVault } from './masking.js';

/** Characters of released text kept as look-behind context for the next scan. */
const CONTEXT_CHARS = 64;

export interface StreamScanResult {
  /** text safe to send now (masked when masking) */
  text: string;
  /** the spans found in it, by kind, positions relative to the whole stream */
  spans: Span[];
}

export class StreamScanner {
  readonly window: number;
  private buffer = '';
  /** where the held (unreleased) part of `buffer` starts; before it is context */
  private heldFrom = 0;
  private released = 0;

  constructor(
    private readonly detectors: readonly Detector[],
    private readonly mask: boolean,
    private readonly vault?: MaskVault,
  ) {
    this.window = detectors.reduce((max, d) => Math.max(max, d.maxLength), 0) + 1;
  }

  /** Characters kept between chunks: the held part and the look-behind context before it. */
  get retained(): number {
    return this.buffer.length;
  }

  /** The most `retained` can be between chunks. */
  get cap(): number {
    return this.window + CONTEXT_CHARS;
  }

  /** Characters received but not yet released. */
  get held(): number {
    return this.buffer.length - this.heldFrom;
  }

  push(chunk: string): StreamScanResult {
    this.buffer += chunk;
    return this.release(this.buffer.length - this.window);
  }

  end(): StreamScanResult {
    return this.release(this.buffer.length);
  }

  private release(until: number): StreamScanResult {
    if (until <= this.heldFrom) return { text: '', spans: [] };
    const spans = detect(this.buffer, this.detectors, this.heldFrom).filter((s) => s.start < until);
    let cut = until;
    const last = spans[spans.length - 1];
    if (last && last.end > cut) cut = last.end;
    const text = this.buffer.slice(this.heldFrom, cut);
    const local = spans.map((s) => ({ start: s.start - this.heldFrom, end: s.end - this.heldFrom, kind: s.kind }));
    const out = this.mask ? applyMask(text, local, this.vault) : text;
    const offset = this.released - this.heldFrom;
    const absolute = spans.map((s) => ({ start: s.start + offset, end: s.end + offset, kind: s.kind }));
    this.released += cut - this.heldFrom;
    // keep a little released text as look-behind context, drop the rest
    const keepFrom = Math.max(0, cut - CONTEXT_CHARS);
    this.buffer = this.buffer.slice(keepFrom);
    this.heldFrom = cut - keepFrom;
    return { text: out, spans: absolute };
  }
}
