import { Worker } from 'node:worker_threads';
import { existingFileUri, type SqliteConnection } from './sqlite-connection.js';

/** How often the worker copies the write-ahead log into the database file (ms). */
export const WAL_CHECKPOINT_INTERVAL_MS = 1000;
/** SQLite's own default: checkpoint on the committing connection once the log holds this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
/** How long closing waits for the worker to close its connection before it is stopped outright. */
const STOP_TIMEOUT_MS = 5000;

/**
 * The worker: its own connection to the file, a PASSIVE checkpoint every interval. A passive checkpoint takes no
 * write lock and waits for nothing, so the gateway's connection never waits for it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const SQLITE_BUSY = 5;
const database = new DatabaseSync(workerData.location, { timeout: 0 });
const timer = setInterval(() => {
  try {
    database.exec('pragma wal_checkpoint(PASSIVE)');
  } catch (error) {
    if (!error || (error.errcode & 0xff) !== SQLITE_BUSY) throw error;
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  database.close();
  parentPort.close();
});
`;

export interface WalCheckpointer {
  /** Stops the worker once its connection is closed; SQLite checkpoints at auto-checkpoint again. */
  stop(): Promise<void>;
}

/**
 * Moves the WAL checkpoints of a SQLite file off the event loop. SQLite otherwise runs them inside the commit that
 * fills the log past 1,000 pages: copying the pages back and syncing the file held the loop for tens of ms. Here the
 * gateway's connection never checkpoints (`wal_autocheckpoint = 0`) and a worker thread with its own connection
 * does, every WAL_CHECKPOINT_INTERVAL_MS. Should the worker fail, the connection checkpoints by itself again.
 */
export function startWalCheckpointer(path: string, database: SqliteConnection, intervalMs = WAL_CHECKPOINT_INTERVAL_MS): WalCheckpointer {
  // The file must exist already: the worker opens it read-write without creating it.
  const location = existingFileUri(path, 'rw');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { location, intervalMs } });
  worker.unref();
  database.exec('pragma wal_autocheckpoint = 0');
  let stopped = false;
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      if (!stopped && database.isOpen) database.exec(`pragma wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
      resolve();
    });
  });
  // A failing worker exits; the connection's own checkpoints take over (above).
  worker.on('error', () => {});
  return {
    async stop() {
      if (stopped) return exited;
      stopped = true;
      if (database.isOpen) database.exec(`pragma wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
      worker.postMessage('stop');
      const timeout = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timeout);
    },
  };
}
