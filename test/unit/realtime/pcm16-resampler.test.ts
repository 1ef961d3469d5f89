/** The streaming PCM16 resampler: exact lengths, chunking that changes nothing, bounded values and a faithful sine. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Pcm16Resampler, pcmRateOf } from '../../../src/realtime/translation/pcm16-resampler.js';

function pcm(samples: readonly number[]): Buffer {
  const buffer = Buffer.alloc(samples.length * 2);
  samples.forEach((sample, index) => buffer.writeInt16LE(sample, index * 2));
  return buffer;
}

function samplesOf(buffer: Buffer): number[] {
  const samples: number[] = [];
  for (let offset = 0; offset + 1 < buffer.length; offset += 2) samples.push(buffer.readInt16LE(offset));
  return samples;
}

const RATES: Array<[number, number]> = [[24_000, 16_000], [16_000, 24_000], [48_000, 24_000], [24_000, 24_000], [22_050, 16_000]];
const int16 = fc.integer({ min: -32768, max: 32767 });

describe('Pcm16Resampler', () => {
  it('gives the same output however the stream is cut into chunks, odd byte counts included', () => {
    fc.assert(fc.property(fc.constantFrom(...RATES), fc.array(int16, { minLength: 0, maxLength: 400 }), fc.array(fc.integer({ min: 0, max: 801 }), { maxLength: 8 }), ([from, to], samples, cuts) => {
      const whole = new Pcm16Resampler(from, to).push(pcm(samples));
      const bytes = pcm(samples);
      const points = [...new Set(cuts.map((cut) => Math.min(cut, bytes.length)))].sort((left, right) => left - right);
      const chunked = new Pcm16Resampler(from, to);
      const parts: Buffer[] = [];
      let start = 0;
      for (const point of [...points, bytes.length]) {
        parts.push(chunked.push(bytes.subarray(start, point)));
        start = point;
      }
      expect(Buffer.concat(parts).equals(whole)).toBe(true);
    }));
  });

  it('emits one sample per output period across the input: floor((n - 1) · to / from) + 1', () => {
    fc.assert(fc.property(fc.constantFrom(...RATES), fc.integer({ min: 1, max: 5000 }), ([from, to], count) => {
      const out = new Pcm16Resampler(from, to).push(Buffer.alloc(count * 2));
      expect(out.length / 2).toBe(Math.floor(((count - 1) * to) / from) + 1);
    }));
    // One second at 24 kHz is one second at 16 kHz, and back (less the half sample after the last input sample).
    expect(new Pcm16Resampler(24_000, 16_000).push(Buffer.alloc(48_000)).length).toBe(32_000);
    expect(new Pcm16Resampler(16_000, 24_000).push(Buffer.alloc(32_000)).length).toBe(47_998);
  });

  it('keeps every sample within its neighbours\' range, and a constant signal constant', () => {
    fc.assert(fc.property(fc.constantFrom(...RATES), fc.array(int16, { minLength: 1, maxLength: 300 }), ([from, to], samples) => {
      const out = samplesOf(new Pcm16Resampler(from, to).push(pcm(samples)));
      for (const sample of out) {
        expect(sample).toBeGreaterThanOrEqual(Math.min(...samples));
        expect(sample).toBeLessThanOrEqual(Math.max(...samples));
      }
    }));
    fc.assert(fc.property(fc.constantFrom(...RATES), int16, fc.integer({ min: 1, max: 500 }), ([from, to], value, count) => {
      expect(new Set(samplesOf(new Pcm16Resampler(from, to).push(pcm(new Array<number>(count).fill(value)))))).toEqual(new Set([value]));
    }));
  });

  it('resamples a 440 Hz tone to the same tone at the new rate, within half a percent of full scale', () => {
    for (const [from, to] of [[24_000, 16_000], [16_000, 24_000]] as const) {
      const amplitude = 20_000;
      const input = Array.from({ length: from / 10 }, (_, index) => Math.round(amplitude * Math.sin((2 * Math.PI * 440 * index) / from)));
      const out = samplesOf(new Pcm16Resampler(from, to).push(pcm(input)));
      const worst = out.reduce((max, sample, index) => Math.max(max, Math.abs(sample - amplitude * Math.sin((2 * Math.PI * 440 * index) / to))), 0);
      expect(worst).toBeLessThan(0.005 * 32768);
    }
  });

  it('passes audio through unchanged at equal rates, and refuses rates that are not positive integers', () => {
    const audio = pcm([1, -2, 300, -32768, 32767]);
    expect(new Pcm16Resampler(24_000, 24_000).push(audio).equals(audio)).toBe(true);
    expect(() => new Pcm16Resampler(0, 16_000)).toThrow(RangeError);
    expect(() => new Pcm16Resampler(24_000, 1.5)).toThrow(RangeError);
  });
});

describe('pcmRateOf', () => {
  it('reads the rate of a Gemini audio MIME type, else the fallback', () => {
    expect(pcmRateOf('audio/pcm;rate=16000', 24_000)).toBe(16_000);
    expect(pcmRateOf('audio/pcm; rate=24000', 16_000)).toBe(24_000);
    expect(pcmRateOf('audio/pcm', 16_000)).toBe(16_000);
    expect(pcmRateOf(undefined, 24_000)).toBe(24_000);
  });
});
