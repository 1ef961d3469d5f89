/** JSON-lines logger. Callers pass metadata only; secrets and prompt text never go in. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Lines wait at most this long for the write that carries them (ms)... */
const WRITE_EVERY_MS = 10;
/** ...or until this much text waits (characters). */
const WRITE_AT_CHARS = 64 * 1024;

/**
 * Standard output, written at most every WRITE_EVERY_MS: the lines logged meanwhile (an access-log line per request
 * under load) go out in one write. Standard output to a pipe or a file is a blocking system call, and one per
 * event-loop turn cost several microseconds a request on a loaded machine. What is pending when the process exits
 * is written then (the exit hook is there only while lines wait, so each copy of this module holds none when idle);
 * a SIGKILL loses at most the last WRITE_EVERY_MS of lines.
 */
const batchedStdout = ((): ((line: string) => void) => {
  let pending: string[] = [];
  let pendingChars = 0;
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    process.removeListener('exit', flush);
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    pendingChars = 0;
    process.stdout.write(text);
  };
  return (line) => {
    if (pending.push(line) === 1) {
      process.once('exit', flush);
      timer = setTimeout(flush, WRITE_EVERY_MS);
      timer.unref();
    }
    pendingChars += line.length;
    if (pendingChars >= WRITE_AT_CHARS) flush();
  };
})();

let lastLineMs = Number.NaN;
let lastLineTime = '';

/** Now in ISO 8601, written once per millisecond (several lines share one under load). */
function timeNow(): string {
  const now = Date.now();
  if (now !== lastLineMs) {
    lastLineMs = now;
    lastLineTime = new Date(now).toISOString();
  }
  return lastLineTime;
}

/**
 * One JSON line: time, level and message first, then the fields. The fields' own JSON is spliced in rather than
 * copied into a new object (an access-log line's copy cost more than its text); a field named like one of the first
 * three replaces its value in place, as a spread would.
 */
function logLine(at: LogLevel, message: string, fields: Record<string, unknown> | undefined): string {
  const time = timeNow();
  if (fields !== undefined && ('time' in fields || 'level' in fields || 'message' in fields)) {
    return `${JSON.stringify({ time, level: at, message, ...fields })}\n`;
  }
  const head = `{"time":"${time}","level":"${at}","message":${JSON.stringify(message)}`;
  const rest = fields === undefined ? '{}' : JSON.stringify(fields);
  return rest.length > 2 ? `${head},${rest.slice(1)}\n` : `${head}}\n`;
}

export function createLogger(level: LogLevel = 'info', write: (line: string) => void = batchedStdout): Logger {
  const threshold = LEVEL_ORDER[level];
  const log = (at: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (LEVEL_ORDER[at] < threshold) return;
    write(logLine(at, message, fields));
  };
  return {
    debug: (message, fields) => log('debug', message, fields),
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** What may be logged about a thrown value: its class and code, never a message that could carry a secret. */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { errorName: error.name, ...(typeof code === 'string' ? { errorCode: code } : {}) };
  }
  return { errorName: typeof error };
}
