import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { callerHeaders, functionNameOf, offerTools, type OfferedServer, type ServerListing } from '../../../src/mcp-tools/offered-servers.js';
import type { McpServer } from '../../../src/storage/repositories/mcp-server-repository.js';

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });

function listing(label: string, names: string[]): ServerListing {
  const offered = {
    requested: { param: 'tools[0]', label, url: null, allows: () => true, needsApproval: () => false, headers: {} },
    server: { name: label } as McpServer,
  } satisfies OfferedServer;
  return { offered, tools: names.map(tool), error: null };
}

describe('offerTools', () => {
  it('names each tool <label>__<tool>, safe for every provider and at most 64 characters', () => {
    const offered = offerTools([listing('docs', ['search', 'read.page', 'x'.repeat(80)])], new Set());
    const names = [...offered.keys()];
    expect(names.slice(0, 2)).toEqual(['docs__search', 'docs__read_page']);
    expect(names.every((name) => /^[A-Za-z0-9_-]{1,64}$/.test(name))).toBe(true);
    expect(offered.get('docs__read_page')?.tool.name).toBe('read.page');
  });

  it('keeps names unique against the caller\'s functions and each other, the table leading back to the tool', () => {
    const offered = offerTools([listing('a', ['b__c', 'b.c']), listing('a__b', ['c'])], new Set(['a__b__c']));
    const names = [...offered.keys()];
    expect(new Set(names).size).toBe(3);
    expect(names).not.toContain('a__b__c');
    expect(names.map((name) => `${offered.get(name)?.offered.requested.label}/${offered.get(name)?.tool.name}`)).toEqual(['a/b__c', 'a/b.c', 'a__b/c']);
    expect(functionNameOf(offered, 'a__b', 'c')).toBe(names[2]);
  });
});

describe('callerHeaders', () => {
  it('takes single-line headers and refuses the transport\'s own', () => {
    expect(callerHeaders({ 'X-Team': 'search' }, 'tools[0].headers')).toEqual({ 'X-Team': 'search' });
    expect(callerHeaders(undefined, 'p')).toEqual({});
    for (const bad of [{ Host: 'evil' }, { 'Mcp-Session-Id': 'x' }, { 'X-A': 'one\ntwo' }, { 'bad name': 'x' }, { 'X-A': 1 }]) {
      expect(() => callerHeaders(bad, 'tools[0].headers')).toThrow(GatewayError);
    }
  });
});
