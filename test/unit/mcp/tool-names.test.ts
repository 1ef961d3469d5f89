import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gatewayToolName, splitToolName } from '../../../src/mcp/tool-names.js';
import { readClientMessage } from '../../../src/mcp/json-rpc.js';

/** Server names as the registry accepts them: letters and digits joined by single `_` or `-`. */
const serverName = fc.stringMatching(/^[A-Za-z0-9]{1,8}(?:[-_][A-Za-z0-9]{1,8}){0,3}$/);

describe('gateway tool names', () => {
  it('split back to the server and tool they were made of, a tool\'s own "__" kept', () => {
    fc.assert(fc.property(serverName, fc.string({ minLength: 1, maxLength: 40 }), (server, tool) => {
      expect(splitToolName(gatewayToolName(server, tool))).toEqual({ server, tool });
    }));
    expect(splitToolName('github__search__issues')).toEqual({ server: 'github', tool: 'search__issues' });
  });

  it('name no tool without a server, a separator and a tool', () => {
    for (const name of ['', 'plain', '__tool', 'server__', '_']) expect(splitToolName(name), name).toBeNull();
  });
});

describe('JSON-RPC client messages', () => {
  it('tells requests, notifications and responses apart, and refuses anything else', () => {
    expect(readClientMessage({ jsonrpc: '2.0', id: 7, method: 'tools/list' })).toEqual({ kind: 'request', request: { id: 7, method: 'tools/list', params: undefined } });
    expect(readClientMessage({ jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual({ kind: 'notification' });
    expect(readClientMessage({ jsonrpc: '2.0', id: 1, result: {} })).toEqual({ kind: 'notification' });
    expect(readClientMessage([{ jsonrpc: '2.0', id: 1, method: 'ping' }])).toMatchObject({ kind: 'invalid', id: null });
    expect(readClientMessage({ jsonrpc: '2.0', id: 1.5, method: 'ping' })).toMatchObject({ kind: 'invalid' });
    expect(readClientMessage({ jsonrpc: '2.0', id: null, method: 'ping' })).toMatchObject({ kind: 'invalid' });
    expect(readClientMessage({ jsonrpc: '2.0', id: 2, method: 'ping', params: [] })).toMatchObject({ kind: 'invalid', id: 2 });
  });

  it('never throws, whatever JSON arrives', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      expect(['request', 'notification', 'invalid']).toContain(readClientMessage(value).kind);
    }));
  });
});
