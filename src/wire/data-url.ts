import type { MediaSource } from '../ir/message.js';

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;

/**
 * `data:<media type>;base64,<data>` → an inline base64 source; any other URL → a URL source. Returns null for a
 * `data:` URL that is not base64 (percent-encoded data URLs are not accepted by any upstream either).
 */
export function mediaSourceFromUrl(url: string): MediaSource | null {
  if (!url.startsWith('data:')) return { kind: 'url', url };
  const match = DATA_URL.exec(url);
  if (match === null) return null;
  const parameters = (match[2] ?? '').split(';').map((parameter) => parameter.trim().toLowerCase());
  if (!parameters.includes('base64')) return null;
  const mediaType = (match[1] ?? '').trim().toLowerCase();
  return { kind: 'base64', mediaType: mediaType === '' ? 'application/octet-stream' : mediaType, data: match[3] ?? '' };
}

/** An inline source as a data URL (OpenAI's `image_url.url` and `file.file_data`). */
export function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}
