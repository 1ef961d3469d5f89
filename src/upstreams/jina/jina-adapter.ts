import { jinaWire } from '../../wire/jina/wire.js';
import { jinaShapedBody, parseJinaShapedAnswer } from '../rerank-answer.js';
import { RerankOnlyAdapter, type RerankEndpoint } from '../rerank-only-adapter.js';

/** Jina AI (`<base>/rerank`, base `https://api.jina.ai/v1`): answers carry `usage.total_tokens`. */
export class JinaAdapter extends RerankOnlyAdapter {
  readonly wire = jinaWire;
  protected readonly defaultBaseUrl = 'https://api.jina.ai/v1';

  protected readonly endpoint: RerankEndpoint = { path: '/rerank', body: jinaShapedBody, parse: parseJinaShapedAnswer };
}
