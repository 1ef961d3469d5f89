/** The PCM16 sample rates the two protocols use: OpenAI Realtime's audio in and out, Gemini Live's input. */
export const OPENAI_PCM_RATE = 24_000;
export const GEMINI_INPUT_PCM_RATE = 16_000;

/** The sample rate a Gemini `mimeType` names (`audio/pcm;rate=16000`), else `fallback`. */
export function pcmRateOf(mimeType: unknown, fallback: number): number {
  if (typeof mimeType !== 'string') return fallback;
  const rate = /(?:^|;)\s*rate\s*=\s*(\d{4,6})\s*(?:;|$)/i.exec(mimeType)?.[1];
  return rate === undefined ? fallback : Number(rate);
}

/**
 * A streaming resampler of mono little-endian PCM16 by linear interpolation between neighbouring samples. Chunks may
 * split anywhere (an odd byte waits for its pair) and the output is the same as resampling the whole stream at once:
 * the position between input samples and the last sample carry over from one chunk to the next. Good enough for speech
 * between 16 and 24 kHz (the downward step drops what lies above the new Nyquist frequency without a filter, a
 * small aliasing speech barely has).
 */
export class Pcm16Resampler {
  /** The position of the next output sample after `#last`, in 1/`toRate` of an input sample (kept whole: exact). */
  #position = 0;
  /** The last input sample of the previous chunk; null before the first. */
  #last: number | null = null;
  /** An odd byte left from the previous chunk. */
  #odd: number | null = null;
  constructor(readonly fromRate: number, readonly toRate: number) {
    if (!(Number.isSafeInteger(fromRate) && Number.isSafeInteger(toRate) && fromRate > 0 && toRate > 0)) throw new RangeError('sample rates must be positive integers');
  }

  /** The resampled PCM16 of the next chunk of input (possibly empty). */
  push(chunk: Buffer): Buffer {
    let bytes = chunk;
    if (this.#odd !== null) {
      bytes = Buffer.concat([Buffer.from([this.#odd]), chunk]);
      this.#odd = null;
    }
    if (bytes.length % 2 === 1) {
      this.#odd = bytes[bytes.length - 1] as number;
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    const count = bytes.length / 2;
    if (count === 0) return Buffer.alloc(0);
    if (this.fromRate === this.toRate) return Buffer.from(bytes);
    // Samples as one sequence: the previous chunk's last one (index 0) then this chunk's, when there was one.
    const offset = this.#last === null ? 0 : 1;
    const at = (index: number): number => (index < offset ? (this.#last as number) : bytes.readInt16LE((index - offset) * 2));
    const available = count + offset;
    const out: number[] = [];
    let position = this.#position;
    // An output sample at `position` needs the samples at floor(position) and the one after (unless exactly on one).
    const end = (available - 1) * this.toRate;
    while (position <= end) {
      const index = Math.floor(position / this.toRate);
      const fraction = position - index * this.toRate;
      const sample = fraction === 0 ? at(index) : at(index) + ((at(index + 1) - at(index)) * fraction) / this.toRate;
      out.push(Math.max(-32768, Math.min(32767, Math.round(sample))));
      position += this.fromRate;
    }
    this.#last = at(available - 1);
    this.#position = position - end;
    const result = Buffer.alloc(out.length * 2);
    for (let index = 0; index < out.length; index += 1) result.writeInt16LE(out[index] as number, index * 2);
    return result;
  }
}

/** `base64` PCM16 resampled by `resampler`, as base64. */
export function resampleBase64(resampler: Pcm16Resampler | null, base64: string): string {
  if (resampler === null || resampler.fromRate === resampler.toRate) return base64;
  return resampler.push(Buffer.from(base64, 'base64')).toString('base64');
}
