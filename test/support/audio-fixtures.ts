/** Audio files for tests: real PCM WAV files of a given length (silence with a faint tone), built in memory or on disk. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

const SAMPLE_RATE = 16_000;
const BYTES_PER_SAMPLE = 2;

export function wavHeader(dataBytes: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * BYTES_PER_SAMPLE, 28);
  header.writeUInt16LE(BYTES_PER_SAMPLE, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** A WAV file of `seconds` (16 kHz, 16-bit mono: 32 000 bytes a second). */
export function wavOfSeconds(seconds: number): Buffer {
  const dataBytes = Math.round(seconds * SAMPLE_RATE) * BYTES_PER_SAMPLE;
  const data = Buffer.alloc(dataBytes);
  for (let sample = 0; sample < dataBytes / 2; sample += 1) data.writeInt16LE(Math.round(800 * Math.sin((2 * Math.PI * 440 * sample) / SAMPLE_RATE)), sample * 2);
  return Buffer.concat([wavHeader(dataBytes), data]);
}

/** Writes a WAV file of exactly `totalBytes` bytes to disk in 1 MiB steps (never whole in memory). */
export async function writeWavFile(path: string, totalBytes: number): Promise<void> {
  const out = createWriteStream(path);
  const header = wavHeader(totalBytes - 44);
  out.write(header);
  const block = Buffer.alloc(1024 * 1024, 1);
  let left = totalBytes - header.length;
  while (left > 0) {
    const piece = left >= block.length ? block : block.subarray(0, left);
    left -= piece.length;
    if (!out.write(piece)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}
