/** JSON-lines logger. Callers pass metadata only; secrets and prompt text never go in. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Standard output, written once per event-loop turn: the lines logged during a turn (an access-log line per request
 * under load) go out in one write instead of one blocking write each. What is pending when the process exits is
 * written then (the exit hook is there only while lines wait, so each copy of this module holds none when idle);
 * a SIGKILL loses at most the current turn's lines.
 */
const batchedStdout = ((): ((line: string) => void) => {
  let pending: string[] = [];
  const flush = (): void => {
    process.removeListener('exit', flush);
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    process.stdout.write(text);
  };
  return (line) => {
    if (pending.push(line) === 1) {
      process.once('exit', flush);
      setImmediate(flush);
    }
  };
})();

/**
 * One JSON line: time, level and message first, then the fields. The fields' own JSON is spliced in rather than
 * copied into a new object (an access-log line's copy cost more than its text); a field named like one of the first
 * three replaces its value in place, as a spread would.
 */
function logLine(at: LogLevel, message: string, fields: Record<string, unknown> | undefined): string {
  const time = new Date().toISOString();
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
