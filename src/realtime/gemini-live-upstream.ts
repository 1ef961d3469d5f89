import type { RawData } from 'ws';
import type { Channel } from '../domain/records.js';
import { GEMINI_DEFAULT_API_VERSION, GEMINI_DEFAULT_BASE_URL, geminiModelResource } from '../upstreams/gemini/gemini-endpoint.js';
import type { OpeningExchange, RealtimeTarget } from './realtime-upstream.js';

/** Channel types whose upstream speaks Gemini's Live protocol. */
export const GEMINI_LIVE_CHANNEL_TYPES: ReadonlySet<string> = new Set(['gemini']);

/**
 * Gemini Live's WebSocket path for an API version, and its `…Constrained` form that Google's clients open with an
 * ephemeral token. Google's own clients put a second slash before `ws` (their base URL ends in one), and Google accepts
 * both.
 */
const LIVE_PATH = /^\/+ws\/google\.ai\.generativelanguage\.(?<version>v1alpha|v1beta|v1)\.GenerativeService\.BidiGenerateContent(?<constrained>Constrained)?$/;

/** The API version of a Gemini Live path, else null. */
export function geminiLiveVersion(path: string): string | null {
  return LIVE_PATH.exec(path)?.groups?.version ?? null;
}

export function geminiLivePath(version: string, constrained = false): string {
  return `/ws/google.ai.generativelanguage.${version}.GenerativeService.BidiGenerateContent${constrained ? 'Constrained' : ''}`;
}

/** Whether a Gemini Live path is the form opened with an ephemeral token. */
export function isConstrainedLivePath(path: string): boolean {
  return LIVE_PATH.exec(path)?.groups?.constrained !== undefined;
}

/**
 * A Gemini channel's Live socket: `<base>/ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent`
 * with the key in `x-goog-api-key` (as Google's Python client sends it; the key stays out of the URL). The version is
 * the channel's `api_version`, else the one its base URL ends in, else the caller's (some features are v1alpha's).
 */
export function geminiLiveTarget(channel: Channel, credential: string, callerVersion: string = GEMINI_DEFAULT_API_VERSION): RealtimeTarget {
  let base = (channel.baseUrl ?? GEMINI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  let version = typeof channel.settings.api_version === 'string' && channel.settings.api_version !== '' ? channel.settings.api_version : callerVersion;
  const suffix = /\/(v\d+(?:alpha|beta)?\d*)$/.exec(base);
  if (suffix?.[1] !== undefined) {
    if (typeof channel.settings.api_version !== 'string' || channel.settings.api_version === '') version = suffix[1];
    base = base.slice(0, -suffix[0].length);
  }
  const url = base.replace(/^http(s?):/i, 'ws$1:') + geminiLivePath(version);
  return { url, headers: { ...channel.headers, 'x-goog-api-key': credential } };
}

/** The caller's `setup` message for one channel: the model is the channel's, everything else as the caller sent it. */
export function setupForChannel(setup: Record<string, unknown>, upstreamModel: string): OpeningExchange {
  return {
    first: JSON.stringify({ setup: { ...setup, model: geminiModelResource(upstreamModel) } }),
    isReady: (data: RawData) => {
      const frame = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      return frame.includes('"setupComplete"');
    },
  };
}
