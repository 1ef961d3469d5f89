import { open } from 'node:fs/promises';

/**
 * Bytes a second assumed when an upstream reports no duration and the file is not WAV: 16 000 (128 kbit/s, a
 * common MP3 rate). Billing by this estimate never charges more than a file of that size and rate would last.
 */
export const ESTIMATE_BYTES_PER_SECOND = 16_000;
/**
 * Bytes a second for the reservation's upper bound: 1 000 (8 kbit/s, below any speech codec's usual rate), so the
 * money held before forwarding covers the longest audio a file of that size can plausibly hold.
 */
export const BOUND_BYTES_PER_SECOND = 1_000;

/** Exact duration of a PCM WAV file from its header (`fmt ` byte rate and `data` size); null when it is not one. */
export async function wavDurationSeconds(path: string, fileSize: number): Promise<number | null> {
  const handle = await open(path, 'r');
  try {
    const header = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(header, 0, header.length, 0);
    if (bytesRead < 12 || header.toString('ascii', 0, 4) !== 'RIFF' || header.toString('ascii', 8, 12) !== 'WAVE') return null;
    let offset = 12;
    let byteRate = 0;
    while (offset + 8 <= bytesRead) {
      const id = header.toString('ascii', offset, offset + 4);
      const size = header.readUInt32LE(offset + 4);
      if (id === 'fmt ' && offset + 16 <= bytesRead) byteRate = header.readUInt32LE(offset + 16);
      if (id === 'data') {
        if (byteRate === 0) return null;
        const available = fileSize - (offset + 8);
        return Math.min(size, available) / byteRate;
      }
      offset += 8 + size + (size % 2);
    }
    return null;
  } finally {
    await handle.close();
  }
}

/** The duration billed when the upstream reports none: exact for WAV, else estimated from the size. */
export async function estimateAudioSeconds(path: string, fileSize: number): Promise<{ seconds: number; exact: boolean }> {
  const wav = await wavDurationSeconds(path, fileSize).catch(() => null);
  if (wav !== null) return { seconds: wav, exact: true };
  return { seconds: fileSize / ESTIMATE_BYTES_PER_SECOND, exact: false };
}
