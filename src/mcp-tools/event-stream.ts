import type { RequestContext } from '../http/request-context.js';

/**
 * The caller's server-sent events of a request whose tools the gateway runs: opened once the tools are listed (a
 * refusal before that is a plain error answer), each event written as it happens.
 */
export class EventStream {
  #open = false;

  constructor(private readonly context: RequestContext) {}

  get open(): boolean {
    return this.#open;
  }

  send(event: string, data: unknown): void {
    const out = this.context.response;
    if (!this.#open) {
      this.#open = true;
      out.statusCode = 200;
      out.setHeader('content-type', 'text/event-stream; charset=utf-8');
      out.setHeader('cache-control', 'no-cache');
      out.setHeader('x-accel-buffering', 'no');
    }
    if (out.destroyed || out.writableEnded) return;
    out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  end(): void {
    if (!this.context.response.writableEnded) this.context.response.end();
  }
}

/** A text in the pieces a stream sends it in (words with their spaces), so a client shows it as it would a model's. */
export function textPieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}
