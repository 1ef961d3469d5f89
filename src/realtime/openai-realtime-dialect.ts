import { realtimeErrorEvent, watchedEvent } from './realtime-events.js';
import type { RealtimeDialect } from './realtime-dialect.js';
import { usageOfRealtimeResponse } from './realtime-usage.js';

/**
 * OpenAI's Realtime protocol (also Azure OpenAI's): `response.created` starts a response and `response.done` reports
 * its usage; a session ends with an `error` event; a cut response is stopped with `response.cancel`.
 */
export const openAIRealtimeDialect: RealtimeDialect = {
  protocol: 'openai-realtime',
  watch(data, binary) {
    const event = binary ? null : watchedEvent(data as Buffer);
    if (event === null) return null;
    if (event.type === 'response.created') return { kind: 'response-started' };
    return { kind: 'response-done', status: event.status, usage: usageOfRealtimeResponse(event.usage) };
  },
  errorFrame: (error) => realtimeErrorEvent(error),
  closeReason: (_error, fallback) => fallback,
  cancelFrame: () => JSON.stringify({ type: 'response.cancel' }),
  drainNotice: () => null,
};
