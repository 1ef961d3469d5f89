import { describe, expect, it } from 'vitest';
import { gatewayResourceUri, splitResourceUri } from '../../../src/mcp/resource-uris.js';
import { HeldStream, ResumableStreams } from '../../../src/mcp/resumable-streams.js';

describe('gateway resource URIs', () => {
  it('reverse to the server and its URI byte for byte, whatever the URI holds', () => {
    for (const uri of ['file:///a/b.txt', 'note://x/readme?v=1#top', 'https://h/p%20q', 'mcp-gateway://other/x', 'urn:isbn:0451450523', 'db://t/a__b']) {
      expect(splitResourceUri(gatewayResourceUri('docs-1', uri))).toEqual({ server: 'docs-1', uri });
    }
  });

  it('refuse URIs that name no server or no resource', () => {
    for (const uri of ['file:///a', 'mcp-gateway://', 'mcp-gateway://docs', 'mcp-gateway://docs/', 'mcp-gateway:///file:///a', 'MCP-GATEWAY://docs/x']) {
      expect(splitResourceUri(uri), uri).toBeNull();
    }
  });
});

describe('resumable streams', () => {
  it('replay the events after an id to the key and session that opened the stream only', () => {
    const streams = new ResumableStreams();
    const stream = streams.open('key-1', 'session-1', 0);
    const first = stream.push('');
    stream.push('{"a":1}');
    stream.push('{"b":2}');
    stream.end(1);
    const found = streams.find(first.id, 'key-1', 'session-1', 2);
    expect(found?.sequence).toBe(1);
    expect(found?.stream.resumeAfter(found.sequence, () => {})?.replay.map((event) => event.data)).toEqual(['{"a":1}', '{"b":2}']);
    expect(streams.find(first.id, 'key-2', 'session-1', 2)).toBeNull();
    expect(streams.find(first.id, 'key-1', 'session-2', 2)).toBeNull();
    // Forgotten five minutes after it ended.
    expect(streams.find(first.id, 'key-1', 'session-1', 5 * 60 * 1000 + 2)).toBeNull();
  });

  it('follow a running stream live and refuse a resumption from events no longer held', () => {
    const stream = new HeldStream('k', 's', 0);
    stream.push('');
    const live: Array<string | null> = [];
    const resumed = stream.resumeAfter(1, (event) => live.push(event === null ? null : event.data));
    stream.push('x');
    stream.end(1);
    expect(resumed?.replay).toEqual([]);
    expect(live).toEqual(['x', null]);
    const big = new HeldStream('k', 's', 0);
    big.push('');
    for (let index = 0; index < 5; index += 1) big.push('y'.repeat(1024 * 1024));
    expect(big.resumeAfter(1, () => {})).toBeNull();
    expect(big.resumeAfter(5, () => {})?.replay).toHaveLength(1);
  });
});
