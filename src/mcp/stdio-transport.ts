import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export interface LocalProgram {
  command: string;
  args: string[];
  /** Added to the few variables every program needs (PATH, HOME, …); the gateway's own environment is not passed. */
  env: Record<string, string>;
}

export interface StdioLimits {
  /** The longest message line the program may write; a longer one ends the process. */
  maxLineBytes: number;
  /** How much of the program's stderr is kept (its last bytes), for the error shown when it dies. */
  stderrBytes: number;
  /** How long the program has to exit once asked before it is killed. */
  exitGraceMs: number;
}

export const DEFAULT_STDIO_LIMITS: StdioLimits = { maxLineBytes: 4 * 1024 * 1024, stderrBytes: 8 * 1024, exitGraceMs: 2000 };

/**
 * MCP's stdio transport from the client's side, over a program the gateway starts itself: spawned without a shell,
 * JSON-RPC messages as single lines on its stdin and stdout; stdout lines are bounded (a program that writes a longer
 * one is ended) and only the tail of stderr is kept, never logged. Closing asks the program to exit (stdin closed,
 * then SIGTERM) and kills it if it does not.
 */
export class ProgramTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #child: ChildProcessWithoutNullStreams | null = null;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #stderr = Buffer.alloc(0);
  #exit: string | null = null;
  #closed = false;

  constructor(private readonly program: LocalProgram, private readonly limits: StdioLimits = DEFAULT_STDIO_LIMITS) {}

  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** How the program ended (`exit code 1`, `signal SIGKILL`), null while it runs. */
  get exit(): string | null {
    return this.#exit;
  }

  /** The last bytes the program wrote to stderr, single-line, with the values of its environment masked. */
  stderrTail(maxChars = 300): string {
    let text = this.#stderr.toString('utf8');
    for (const value of Object.values(this.program.env)) if (value.length >= 4) text = text.split(value).join('[redacted]');
    text = text.replace(/\s+/g, ' ').trim();
    return text.length > maxChars ? `…${text.slice(text.length - maxChars + 1)}` : text;
  }

  start(): Promise<void> {
    if (this.#child !== null) throw new Error('ProgramTransport already started');
    // Closed before it started (the gateway stopping meanwhile): the program is never spawned.
    if (this.#closed) return Promise.reject(new Error('The local MCP server was stopped before it started.'));
    return new Promise((resolve, reject) => {
      const child = spawn(this.program.command, this.program.args, {
        env: { ...getDefaultEnvironment(), ...this.program.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
      this.#child = child;
      child.once('error', (error) => {
        this.#exit ??= `could not start: ${error.message}`;
        reject(error);
        this.onerror?.(error);
        this.#ended();
      });
      child.once('spawn', () => resolve());
      child.once('close', (code, signal) => {
        this.#exit ??= signal === null ? `exit code ${code ?? 'unknown'}` : `signal ${signal}`;
        this.#ended();
      });
      child.stdout.on('data', (chunk: Buffer) => this.#read(chunk));
      child.stderr.on('data', (chunk: Buffer) => this.#keepStderr(chunk));
      child.stdin.on('error', (error) => this.onerror?.(error));
      child.stdout.on('error', (error) => this.onerror?.(error));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === undefined || this.#closed || !stdin.writable) return Promise.reject(new Error('The local MCP server is not running.'));
    return new Promise((resolve, reject) => {
      const flushed = stdin.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error !== null && error !== undefined) reject(error);
      });
      if (flushed) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (child === null || this.#exit !== null) {
      this.#ended();
      return;
    }
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const within = (ms: number): Promise<boolean> => Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
    child.stdin.end();
    if (!(await within(this.limits.exitGraceMs))) {
      child.kill('SIGTERM');
      if (!(await within(this.limits.exitGraceMs))) {
        child.kill('SIGKILL');
        await within(this.limits.exitGraceMs);
      }
    }
    this.#ended();
  }

  /** Splits stdout into lines, each one JSON-RPC message; a line past the bound ends the program. */
  #read(chunk: Buffer): void {
    let start = 0;
    for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, start)) {
      this.#pending.push(chunk.subarray(start, index));
      const line = Buffer.concat(this.#pending).toString('utf8').replace(/\r$/, '');
      this.#pending = [];
      this.#pendingBytes = 0;
      start = index + 1;
      this.#deliver(line);
    }
    if (start < chunk.length) {
      this.#pending.push(chunk.subarray(start));
      this.#pendingBytes += chunk.length - start;
    }
    if (this.#pendingBytes > this.limits.maxLineBytes) {
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#exit ??= `wrote a line longer than ${this.limits.maxLineBytes} bytes`;
      this.onerror?.(new Error(`The local MCP server wrote a line longer than ${this.limits.maxLineBytes} bytes.`));
      this.#child?.kill('SIGKILL');
    }
  }

  #deliver(line: string): void {
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.onerror?.(new Error('The local MCP server wrote a line that is not JSON.'));
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (!message.success) {
      this.onerror?.(new Error('The local MCP server wrote a line that is not a JSON-RPC message.'));
      return;
    }
    this.onmessage?.(message.data);
  }

  #keepStderr(chunk: Buffer): void {
    const joined = Buffer.concat([this.#stderr, chunk]);
    this.#stderr = joined.length > this.limits.stderrBytes ? Buffer.from(joined.subarray(joined.length - this.limits.stderrBytes)) : joined;
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}
