import type { Channel } from '../../domain/records.js';
import type { RerankRequest } from '../../ir/rerank.js';
import { jinaWire } from '../../wire/jina/wire.js';
import { jinaShapedBody, parseJinaShapedAnswer } from '../rerank-answer.js';
import { RerankOnlyAdapter } from '../rerank-only-adapter.js';
import type { UpstreamRequest, UpstreamRerank } from '../upstream-adapter.js';

/** Jina AI (`<base>/rerank`, base `https://api.jina.ai/v1`): answers carry `usage.total_tokens`. */
export class JinaAdapter extends RerankOnlyAdapter {
  readonly wire = jinaWire;
  protected readonly defaultBaseUrl = 'https://api.jina.ai/v1';

  readonly rerank: UpstreamRerank = {
    build: (channel: Channel, credential: string, request: RerankRequest, upstreamModel: string): UpstreamRequest =>
      this.post(channel, credential, '/rerank', jinaShapedBody(request, upstreamModel)),
    parse: parseJinaShapedAnswer,
  };
}
