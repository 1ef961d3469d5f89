/** Media wire pieces: Gemini image generation both ways, WAV durations, OpenAI media usage (bodies and SSE events). */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateAudioSeconds, wavDurationSeconds } from '../../../src/multipart/audio-duration.js';
import { aspectRatioFor, buildImageGenerationBody, parseImageGenerationBody } from '../../../src/upstreams/gemini/image-generation.js';
import { MediaStreamUsageObserver, readOpenAIMediaUsage } from '../../../src/upstreams/openai/openai-media-usage.js';
import { wavOfSeconds } from '../../support/audio-fixtures.js';

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-media-codecs-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('Gemini image generation', () => {
  it('maps OpenAI sizes to the nearest Gemini aspect ratio', () => {
    expect(aspectRatioFor('1024x1024')).toBe('1:1');
    expect(aspectRatioFor('1536x1024')).toBe('3:2');
    expect(aspectRatioFor('1024x1536')).toBe('2:3');
    expect(aspectRatioFor('1792x1024')).toBe('16:9');
    expect(aspectRatioFor('1024x1792')).toBe('9:16');
    expect(aspectRatioFor('auto')).toBeNull();
    expect(aspectRatioFor(undefined)).toBeNull();
  });

  it('asks for IMAGE output with the prompt as the user turn', () => {
    expect(buildImageGenerationBody({ model: 'm', prompt: 'a kite', n: 1, size: '256x256', warnings: [] })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a kite' }] }],
      generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1' } },
    });
  });

  it('reads inlineData images and usage, ignoring text parts, and says why when there is no image', () => {
    const answer = parseImageGenerationBody(Buffer.from(JSON.stringify({
      candidates: [{ content: { parts: [{ text: 'here' }, { inlineData: { mimeType: 'image/jpeg', data: 'AAAA' } }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1290, totalTokenCount: 1295 },
    })));
    expect(answer.images).toEqual([{ base64: 'AAAA', mimeType: 'image/jpeg' }]);
    expect(answer.usage?.output.total).toBe(1290);
    expect(answer.refusal).toBeUndefined();
    expect(parseImageGenerationBody(Buffer.from('{"promptFeedback":{"blockReason":"SAFETY"}}')).refusal).toContain('SAFETY');
    expect(parseImageGenerationBody(Buffer.from('{"candidates":[{"content":{"parts":[{"text":"no"}]},"finishReason":"IMAGE_SAFETY"}]}')).refusal).toContain('IMAGE_SAFETY');
    expect(() => parseImageGenerationBody(Buffer.from('not json'))).toThrow();
  });
});

describe('audio durations', () => {
  it('reads the exact duration of a WAV file and estimates others from their size', async () => {
    const wav = path.join(directory, 'a.wav');
    await writeFile(wav, wavOfSeconds(3));
    expect(await wavDurationSeconds(wav, wavOfSeconds(3).length)).toBe(3);
    expect(await estimateAudioSeconds(wav, wavOfSeconds(3).length)).toEqual({ seconds: 3, exact: true });
    const mp3 = path.join(directory, 'a.mp3');
    await writeFile(mp3, Buffer.concat([Buffer.from('ID3'), Buffer.alloc(31_997)]));
    expect(await estimateAudioSeconds(mp3, 32_000)).toEqual({ seconds: 2, exact: false });
  });
});

describe('OpenAI media usage', () => {
  it('reads duration, token and image usage from JSON answers', () => {
    expect(readOpenAIMediaUsage('{"text":"x","usage":{"type":"duration","seconds":7}}')).toMatchObject({ seconds: 7, tokens: null });
    expect(readOpenAIMediaUsage('{"duration":3.5,"text":"x"}').seconds).toBe(3.5);
    expect(readOpenAIMediaUsage('{"text":"x","usage":{"type":"tokens","input_tokens":10,"output_tokens":4,"total_tokens":14}}').tokens?.output.total).toBe(4);
    expect(readOpenAIMediaUsage('{"data":[{},{}],"usage":{"input_tokens":3,"output_tokens":2112,"total_tokens":2115}}')).toMatchObject({ images: 2 });
    expect(readOpenAIMediaUsage('plain transcript text')).toEqual({ tokens: null, seconds: null, images: null });
  });

  it('finds the usage of an SSE stream however its bytes are split', () => {
    const stream = Buffer.from([
      'data: {"type":"transcript.text.delta","delta":"héllo "}\n\n',
      'data: {"type":"transcript.text.delta","delta":"wörld"}\n\n',
      'data: {"type":"transcript.text.done","text":"héllo wörld","usage":{"type":"tokens","input_tokens":21,"output_tokens":3,"total_tokens":24}}\n\n',
    ].join(''));
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 8 }), (cuts) => {
      const observer = new MediaStreamUsageObserver();
      const points = [0, ...[...new Set(cuts)].sort((a, b) => a - b), stream.length];
      for (let index = 1; index < points.length; index += 1) observer.observe(stream.subarray(points[index - 1], points[index]));
      expect(observer.tokens?.input.total).toBe(21);
      expect(observer.tokens?.output.total).toBe(3);
    }));
  });
});
