/**
 * The stdio transport's bounds, against real child processes: a program that writes a line longer than the bound is
 * ended (and reported), a line that is not JSON-RPC is reported and skipped, only the tail of stderr is kept with the
 * program's environment values masked, and close() ends a program that ignores its closed stdin and SIGTERM.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ProgramTransport } from '../../../src/mcp/stdio-transport.js';

const limits = { maxLineBytes: 1024, stderrBytes: 64, exitGraceMs: 300 };

function closed(transport: ProgramTransport): Promise<void> {
  return new Promise((resolve) => { transport.onclose = resolve; });
}

describe('ProgramTransport', () => {
  it('ends a program whose stdout line passes the bound', async () => {
    const transport = new ProgramTransport({ command: process.execPath, args: ['-e', 'process.stdout.write("x".repeat(5000)); setInterval(() => {}, 1000)'], env: {} }, limits);
    const errors: string[] = [];
    transport.onerror = (error) => errors.push(error.message);
    const ended = closed(transport);
    await transport.start();
    await ended;
    expect(errors.some((message) => message.includes('longer than 1024 bytes'))).toBe(true);
    expect(transport.exit).toContain('longer than 1024 bytes');
  });

  it('delivers JSON-RPC lines, reports others, keeps a masked stderr tail', async () => {
    const script = [
      'process.stderr.write("noise ".repeat(40) + "token=" + process.env.SECRET_VALUE + "\\n");',
      'process.stdout.write("not json\\n");',
      'process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } }) + "\\r\\n");',
      'setTimeout(() => process.exit(0), 200);',
    ].join('');
    const transport = new ProgramTransport({ command: process.execPath, args: ['-e', script], env: { SECRET_VALUE: 'hunter2-secret' } }, limits);
    const messages: JSONRPCMessage[] = [];
    const errors: string[] = [];
    transport.onmessage = (message) => messages.push(message);
    transport.onerror = (error) => errors.push(error.message);
    const ended = closed(transport);
    await transport.start();
    await ended;
    expect(messages).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } }]);
    expect(errors).toEqual(['The local MCP server wrote a line that is not JSON.']);
    const tail = transport.stderrTail();
    expect(tail.length).toBeLessThanOrEqual(64);
    expect(tail).toContain('token=[redacted]');
    expect(tail).not.toContain('hunter2');
    expect(transport.exit).toBe('exit code 0');
  });

  it('kills a program that ignores its closed stdin and SIGTERM', async () => {
    // The program says when it ignores SIGTERM: closed before that (a slow start on a loaded machine), SIGTERM ends it.
    const script = 'process.on("SIGTERM", () => {}); process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\\n"); setInterval(() => {}, 1000)';
    const transport = new ProgramTransport({ command: process.execPath, args: ['-e', script], env: {} }, limits);
    const ready = new Promise<void>((resolve) => { transport.onmessage = () => resolve(); });
    await transport.start();
    await ready;
    const pid = transport.pid as number;
    await transport.close();
    expect(transport.exit).toBe('signal SIGKILL');
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('reports a program that cannot be started', async () => {
    const transport = new ProgramTransport({ command: '/nonexistent/program', args: [], env: {} }, limits);
    await expect(transport.start()).rejects.toThrow(/ENOENT/);
    expect(transport.exit).toContain('could not start');
  });
});
