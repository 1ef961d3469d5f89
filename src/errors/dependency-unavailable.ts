/**
 * Whether a thrown value means the gateway's own database or Redis cannot be reached right now (refused or lost
 * connection, server shutting down or starting up, connection slots exhausted, pool timeout, SQLite busy), as
 * opposed to a bug or a bad query. Such a fault is temporary: the request is answered 503 with Retry-After.
 */
export function isDependencyUnavailable(value: unknown): boolean {
  for (let current: unknown = value, hops = 0; current !== null && current !== undefined && hops < 5; hops += 1) {
    if (typeof current !== 'object') return false;
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
    if (current instanceof AggregateError && current.errors.some((inner) => isDependencyUnavailable(inner))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  // sockets
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  // PostgreSQL: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections, idle session timeout
  '57P01', '57P02', '57P03', '53300', '57P05',
  // SQLite: the write lock stayed taken past busy_timeout
  'SQLITE_BUSY',
]);

/** node-postgres and pg-pool report lost connections and pool timeouts by message only. */
const UNAVAILABLE_MESSAGE = /Connection terminated|Client has encountered a connection error|not queryable|timeout exceeded when trying to connect|Connection is closed|Stream isn't writeable/;
