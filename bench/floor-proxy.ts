/**
 * The benchmark's second yardstick, the floor: the least a metered gateway must do per request, written as cheaply
 * as Node allows. A yardstick, not a product: one key, one price, no routing table, no retries, no admin API. The
 * bench reports each gateway figure against it (and it against the bare proxy), measured in the same run.
 *
 * Per request, in one process, no framework:
 * 1. node:http in; the whole body read; the caller's key (`Authorization: Bearer` or `x-api-key`) hashed with sha256
 *    and looked up in a Map, as a key-cache hit does.
 * 2. `model`, `stream` and `max_tokens` read with JSON.parse of the body: what a gateway that validates the request
 *    does at least once (or, with --find-fields scan, found by a byte scan: what one that forwards the caller's bytes
 *    unchecked needs).
 * 3. One rate-limit window (a counter per key per minute) and a balance hold (integer nano-dollars, subtracted).
 * 4. The caller's own bytes forwarded with an undici Pool (the bare proxy's options), the caller's key swapped for the
 *    upstream's, the answer streamed back. Usage: an SSE answer is cut at its blank lines and only an event whose bytes
 *    hold `"usage":{` is parsed (OpenAI's last chunk; Anthropic's message_start and message_delta); a whole answer is
 *    parsed once.
 * 5. After the answer: the hold settled to the exact cost; one usage row and one ledger entry queued for a SQLite
 *    file (node:sqlite, WAL, prepared statements) and written in one transaction per event-loop turn, with the key's
 *    balance; one access-log line (JSON), the lines of 10 ms written together as the gateway's logger does.
 *
 *   node dist/bench/floor-proxy.js --upstream ORIGIN --upstream-key KEY --key CALLER_KEY --db FILE [--find-fields parse|scan]
 *     [--port 0] [--exit-on-stdin-close]
 *
 * Prints `LISTENING <origin>` once ready.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { hash } from 'node:crypto';
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { argument, listenOnLoopback, serveUntilStopped } from './bare-proxy.js';

export interface FloorOptions {
  upstream: string;
  upstreamKey: string;
  /** the one caller key it accepts */
  key: string;
  dbPath: string;
  port?: number;
  /** where the access-log lines go (default standard output) */
  writeLog?: (text: string) => void;
  /** prices in integer nano-dollars per token (default 3,000, 300, 3,750 and 15,000: $3, $0.30, $3.75 and $15 a million) */
  inputNanoPerToken?: number;
  cacheReadNanoPerToken?: number;
  cacheWriteNanoPerToken?: number;
  outputNanoPerToken?: number;
  limitPerMinute?: number;
  balanceNano?: number;
  /** how `model`, `stream` and `max_tokens` are found: JSON.parse of the body (default) or a byte scan (scanFields) */
  findFields?: 'parse' | 'scan';
}

interface KeyState { id: string; availableNano: number; heldNano: number; limitPerMinute: number; minute: number; used: number }
/** Input tokens read from and written to the provider's prompt cache are priced apart from the rest. */
interface Usage { input: number; cacheRead: number; cacheWrite: number; output: number }
interface RawUsage {
  input_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  output_tokens?: number;
  prompt_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens?: number;
}
interface Row { keyId: string; model: string; status: number; usage: Usage; costNano: number; atMs: number; ms: number }

/** Headers of one hop, `host` (the pool sets it) and the caller's credentials (the upstream's replace them). */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'authorization', 'x-api-key']);
const USAGE = Buffer.from('"usage":');
const EVENT_END = Buffer.from('\n\n');
const DATA = Buffer.from('data:');
const OPEN_BRACE = 0x7b;
const DEFAULT_MAX_TOKENS = 4096;

/** Takes the token counts a parsed OpenAI or Anthropic payload (or Anthropic stream event) carries; later ones win. */
function takeUsage(payload: { usage?: RawUsage | null; message?: { usage?: RawUsage } } | null, usage: Usage): void {
  const raw = payload?.usage ?? payload?.message?.usage;
  if (raw === undefined || raw === null) return;
  if (typeof raw.input_tokens === 'number') usage.input = raw.input_tokens;
  if (typeof raw.cache_read_input_tokens === 'number') usage.cacheRead = raw.cache_read_input_tokens;
  if (typeof raw.cache_creation_input_tokens === 'number') usage.cacheWrite = raw.cache_creation_input_tokens;
  if (typeof raw.prompt_tokens === 'number') {
    // OpenAI counts its cached tokens inside prompt_tokens.
    usage.cacheRead = raw.prompt_tokens_details?.cached_tokens ?? 0;
    usage.input = raw.prompt_tokens - usage.cacheRead;
  }
  const output = raw.output_tokens ?? raw.completion_tokens;
  if (typeof output === 'number') usage.output = output;
}

/** Finds usage in an SSE answer as it passes: whole events only, and only those whose bytes hold `"usage":{`. */
class SseUsage {
  private tail: Buffer | null = null;
  constructor(private readonly usage: Usage) {}

  push(chunk: Buffer): void {
    const data = this.tail === null ? chunk : Buffer.concat([this.tail, chunk]);
    const end = data.lastIndexOf(EVENT_END);
    this.tail = end < 0 ? data : end + 2 < data.length ? data.subarray(end + 2) : null;
    for (let at = end < 0 ? -1 : data.indexOf(USAGE); at >= 0 && at < end; at = data.indexOf(USAGE, at + USAGE.length)) {
      let value = at + USAGE.length;
      while (data[value] === 0x20) value += 1;
      if (data[value] !== OPEN_BRACE) continue; // `"usage":null` in OpenAI's other chunks
      const boundary = data.lastIndexOf(EVENT_END, at);
      const dataAt = data.indexOf(DATA, boundary < 0 ? 0 : boundary + 2);
      if (dataAt < 0 || dataAt > at) continue;
      const lineEnd = data.indexOf(0x0a, dataAt);
      try {
        takeUsage(JSON.parse(data.toString('utf8', dataAt + DATA.length, lineEnd)) as Parameters<typeof takeUsage>[0], this.usage);
      } catch {
        // not JSON: no usage in it
      }
      at = data.indexOf(EVENT_END, at);
    }
  }
}

interface Fields { model?: unknown; stream?: unknown; max_tokens?: unknown }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The top-level `model`, `stream` and `max_tokens` of a JSON object, found in one pass over its bytes: strings are
 * skipped with a native search for their closing quote, nesting is counted, nothing else is checked (the upstream
 * validates the body it is sent). Undefined where the bytes do not hold an object.
 */
export function scanFields(body: Buffer): Fields | undefined {
  const fields: Fields = {};
  let depth = 0;
  let member: keyof Fields | '' | undefined; // the top-level member whose value comes next
  for (let at = 0; at < body.length; at++) {
    const byte = body[at]!;
    if (byte === QUOTE) {
      let end = body.indexOf(QUOTE, at + 1);
      for (;;) {
        if (end < 0) return undefined;
        let escapes = 0;
        while (body[end - 1 - escapes] === BACKSLASH) escapes += 1;
        if (escapes % 2 === 0) break;
        end = body.indexOf(QUOTE, end + 1);
      }
      if (depth === 1 && member === undefined) {
        const name = body.toString('latin1', at + 1, end);
        member = name === 'model' || name === 'stream' || name === 'max_tokens' ? name : '';
      } else if (depth === 1) {
        if (member === 'model') {
          const text = body.toString('utf8', at + 1, end);
          fields.model = text.includes('\\') ? (JSON.parse(`"${text}"`) as string) : text;
        }
        member = undefined;
      }
      at = end;
    } else if (byte === 0x7b || byte === 0x5b) {
      depth += 1;
      if (depth === 2 && member !== undefined) member = undefined; // an object or array value: skipped
    } else if (byte === 0x7d || byte === 0x5d) {
      depth -= 1;
    } else if (depth === 1 && member !== undefined && byte !== 0x3a && byte !== 0x2c && byte > 0x20) {
      // a literal value: true, false, null or a number
      let end = at;
      while (end < body.length && body[end] !== 0x2c && body[end] !== 0x7d && body[end]! > 0x20) end += 1;
      const literal = body.toString('latin1', at, end);
      if (member === 'stream') fields.stream = literal === 'true';
      if (member === 'max_tokens') fields.max_tokens = Number(literal);
      member = undefined;
      at = end - 1;
    }
  }
  let first = 0;
  while (body[first] !== undefined && body[first]! <= 0x20) first += 1;
  return depth === 0 && body[first] === OPEN_BRACE ? fields : undefined;
}

function callerKey(headers: IncomingHttpHeaders): { key: string | undefined; header: 'authorization' | 'x-api-key' } {
  const bearer = headers.authorization;
  if (bearer !== undefined && bearer.startsWith('Bearer ')) return { key: bearer.slice(7), header: 'authorization' };
  const key = headers['x-api-key'];
  return { key: typeof key === 'string' ? key : undefined, header: 'x-api-key' };
}

export async function startFloorProxy(options: FloorOptions): Promise<{ url: string; close: () => Promise<void> }> {
  const inPrice = options.inputNanoPerToken ?? 3_000;
  const cacheReadPrice = options.cacheReadNanoPerToken ?? 300;
  const cacheWritePrice = options.cacheWriteNanoPerToken ?? 3_750;
  const outPrice = options.outputNanoPerToken ?? 15_000;
  const writeLog = options.writeLog ?? ((text: string) => void process.stdout.write(text));
  const pool = new Pool(new URL(options.upstream).origin, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
  const keyState: KeyState = { id: 'key-1', availableNano: options.balanceNano ?? 1e15, heldNano: 0, limitPerMinute: options.limitPerMinute ?? 1e9, minute: 0, used: 0 };
  const keys = new Map([[hash('sha256', options.key), keyState]]);

  const db = new DatabaseSync(options.dbPath);
  db.exec('pragma journal_mode = WAL; pragma synchronous = NORMAL');
  db.exec(`create table if not exists usage_rows (id integer primary key, key_id text, model text, status integer, input_tokens integer,
             cache_read_tokens integer, cache_write_tokens integer, output_tokens integer, cost_nano integer, at_ms integer, duration_ms real);
           create table if not exists ledger (id integer primary key, key_id text, usage_id integer, amount_nano integer, at_ms integer);
           create table if not exists balances (key_id text primary key, balance_nano integer);`);
  const insertUsage = db.prepare('insert into usage_rows (key_id, model, status, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, cost_nano, at_ms, duration_ms) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const insertLedger = db.prepare('insert into ledger (key_id, usage_id, amount_nano, at_ms) values (?, ?, ?, ?)');
  const saveBalance = db.prepare('insert into balances (key_id, balance_nano) values (?, ?) on conflict (key_id) do update set balance_nano = excluded.balance_nano');

  let rows: Row[] = [];
  const writeRows = (): void => {
    const batch = rows;
    rows = [];
    db.exec('begin');
    for (const row of batch) {
      const usageId = insertUsage.run(row.keyId, row.model, row.status, row.usage.input, row.usage.cacheRead, row.usage.cacheWrite, row.usage.output, row.costNano, row.atMs, row.ms).lastInsertRowid;
      insertLedger.run(row.keyId, usageId, -row.costNano, row.atMs);
    }
    saveBalance.run(keyState.id, keyState.availableNano + keyState.heldNano);
    db.exec('commit');
  };
  let logLines: string[] = [];
  let logTimer: NodeJS.Timeout | null = null;
  const writeLines = (): void => {
    logTimer = null;
    const text = logLines.join('');
    logLines = [];
    writeLog(text);
  };

  /** One access-log line; after an admitted request also the settled hold, its usage row and its ledger entry. */
  const finish = (request: IncomingMessage, status: number, startedMs: number, admitted?: { model: string; holdNano: number; usage: Usage }): void => {
    const atMs = Date.now();
    const ms = performance.now() - startedMs;
    let costNano = 0;
    if (admitted !== undefined) {
      const { input, cacheRead, cacheWrite, output } = admitted.usage;
      costNano = input * inPrice + cacheRead * cacheReadPrice + cacheWrite * cacheWritePrice + output * outPrice;
      keyState.heldNano -= admitted.holdNano;
      keyState.availableNano += admitted.holdNano - costNano;
      if (rows.push({ keyId: keyState.id, model: admitted.model, status, usage: admitted.usage, costNano, atMs, ms }) === 1) setImmediate(writeRows);
    }
    const line = { time: new Date(atMs).toISOString(), method: request.method, path: request.url, status, model: admitted?.model, input_tokens: admitted?.usage.input, cache_read_tokens: admitted?.usage.cacheRead, cache_write_tokens: admitted?.usage.cacheWrite, output_tokens: admitted?.usage.output, cost_nano: costNano, ms: Math.round(ms * 1000) / 1000 };
    if (logLines.push(`${JSON.stringify(line)}\n`) === 1) logTimer = setTimeout(writeLines, 10);
  };
  const refuse = (request: IncomingMessage, response: ServerResponse, status: number, message: string, startedMs: number): void => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message } }));
    finish(request, status, startedMs);
  };

  const handle = (request: IncomingMessage, response: ServerResponse, body: Buffer, startedMs: number): void => {
    const presented = callerKey(request.headers);
    if (presented.key === undefined || keys.get(hash('sha256', presented.key)) !== keyState) return refuse(request, response, 401, 'invalid key', startedMs);
    let fields: Fields | undefined;
    try {
      fields = options.findFields === 'scan' ? scanFields(body) : (JSON.parse(body.toString('utf8')) as Fields);
    } catch {
      fields = undefined;
    }
    if (typeof fields !== 'object' || fields === null) return refuse(request, response, 400, 'body is not a JSON object', startedMs);
    const model = fields.model;
    if (typeof model !== 'string') return refuse(request, response, 400, 'model is required', startedMs);
    const minute = Math.floor(Date.now() / 60_000);
    if (keyState.minute !== minute) [keyState.minute, keyState.used] = [minute, 0];
    if (keyState.used >= keyState.limitPerMinute) return refuse(request, response, 429, 'rate limit', startedMs);
    const maxTokens = typeof fields.max_tokens === 'number' ? fields.max_tokens : DEFAULT_MAX_TOKENS;
    const holdNano = Math.ceil(body.length / 4) * inPrice + maxTokens * outPrice;
    if (keyState.availableNano < holdNano) return refuse(request, response, 402, 'balance too low', startedMs);
    keyState.used += 1;
    keyState.availableNano -= holdNano;
    keyState.heldNano += holdNano;
    const admitted = { model, holdNano, usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 } };

    const headers: Record<string, string | string[]> = {};
    for (const name in request.headers) {
      const value = request.headers[name];
      if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value;
    }
    headers[presented.header] = presented.header === 'authorization' ? `Bearer ${options.upstreamKey}` : options.upstreamKey;
    let done = false;
    const settle = (status: number): void => {
      if (!done) finish(request, status, startedMs, admitted);
      done = true;
    };
    pool.request({ method: request.method as 'POST', path: request.url ?? '/', headers, body, headersTimeout: 0, bodyTimeout: 0 }).then(({ statusCode, headers: answerHeaders, body: answer }) => {
      const head: Record<string, string | string[]> = {};
      for (const name in answerHeaders) {
        const value = answerHeaders[name];
        if (value !== undefined && name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding') head[name] = value;
      }
      response.writeHead(statusCode, head);
      const contentType = answerHeaders['content-type'];
      const sse = typeof contentType === 'string' && contentType.startsWith('text/event-stream') ? new SseUsage(admitted.usage) : null;
      const whole: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => {
        if (sse !== null) sse.push(chunk);
        else whole.push(chunk);
        if (!response.write(chunk)) {
          answer.pause();
          response.once('drain', () => answer.resume());
        }
      });
      answer.on('end', () => {
        if (sse === null && statusCode < 300) {
          try {
            takeUsage(JSON.parse(Buffer.concat(whole).toString('utf8')) as Parameters<typeof takeUsage>[0], admitted.usage);
          } catch {
            // not JSON: nothing to bill from it
          }
        }
        response.end();
        settle(statusCode);
      });
      answer.on('error', () => response.destroy());
      // Also when the caller left mid-answer: the usage counted so far is billed.
      answer.on('close', () => settle(statusCode));
      response.once('close', () => {
        if (!response.writableFinished) answer.destroy();
      });
    }, () => {
      if (response.headersSent) response.destroy();
      else response.writeHead(502, { 'content-type': 'text/plain' }).end('upstream failed');
      settle(502);
    });
  };

  const server = createServer((request, response) => {
    const startedMs = performance.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, response, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), startedMs));
  });
  return listenOnLoopback(server, pool, options.port ?? 0, () => {
    if (rows.length > 0) writeRows();
    if (logTimer !== null) clearTimeout(logTimer);
    if (logLines.length > 0) writeLines();
    db.close();
  });
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const [upstream, upstreamKey, key, dbPath] = [argument('--upstream'), argument('--upstream-key'), argument('--key'), argument('--db')];
  if (upstream === undefined || upstreamKey === undefined || key === undefined || dbPath === undefined) {
    console.error('usage: floor-proxy --upstream <origin> --upstream-key <key> --key <caller key> --db <sqlite file> [--port N] [--exit-on-stdin-close]');
    process.exit(2);
  }
  const findFields = argument('--find-fields') === 'scan' ? 'scan' : 'parse';
  serveUntilStopped(await startFloorProxy({ upstream, upstreamKey, key, dbPath, findFields, port: Number(argument('--port') ?? '0') }));
}
