import { stat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { existingFileUri, type SqliteConnection } from './sqlite-connection.js';

/** How often the worker copies the write-ahead log into the database file, and how often the log's size is read (ms). */
export const WAL_CHECKPOINT_INTERVAL_MS = 1000;
/**
 * The log may hold this much before a worker is started to checkpoint it: what SQLite's own auto-checkpoint lets it
 * hold (1,000 pages of 4 KiB). Below it nothing needs checkpointing yet, and a worker thread (a second JavaScript
 * heap, about 12 MiB) is not kept for it.
 */
export const WAL_WORKER_START_BYTES = 4 * 1024 * 1024;
/** A worker that found nothing new to checkpoint this many times in a row empties the log and ends. */
export const WAL_WORKER_IDLE_CHECKPOINTS = 30;
/** SQLite's own default: checkpoint on the committing connection once the log holds this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
/** How long closing waits for the worker to close its connection before it is stopped outright. */
const STOP_TIMEOUT_MS = 5000;

/**
 * The worker: its own connection to the file, a PASSIVE checkpoint every interval. A passive checkpoint takes no
 * write lock and waits for nothing, so the gateway's connection never waits for it. Once every frame of the log has
 * been copied and none came for `idleCheckpoints` intervals, it truncates the log (only if no connection is using it:
 * it waits for nothing either) and exits with code 0.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const SQLITE_BUSY = 5;
const database = new DatabaseSync(workerData.location, { timeout: 0 });
const passive = database.prepare('pragma wal_checkpoint(PASSIVE)');
let idle = 0;
let lastLog = -1;
function end() {
  clearInterval(timer);
  database.close();
  parentPort.close();
}
const timer = setInterval(() => {
  try {
    const { log, checkpointed } = passive.get();
    idle = log === checkpointed && log === lastLog ? idle + 1 : 0;
    lastLog = log;
    if (idle >= workerData.idleCheckpoints && database.prepare('pragma wal_checkpoint(TRUNCATE)').get().busy === 0) end();
  } catch (error) {
    if (!error || (error.errcode & 0xff) !== SQLITE_BUSY) throw error;
  }
}, workerData.intervalMs);
parentPort.on('message', end);
`;

export interface WalCheckpointer {
  /** Stops the worker once its connection is closed; SQLite checkpoints at auto-checkpoint again. */
  stop(): Promise<void>;
}

export interface WalCheckpointerOptions {
  intervalMs?: number;
  /** WAL_WORKER_START_BYTES unless given. */
  startAtBytes?: number;
  /** WAL_WORKER_IDLE_CHECKPOINTS unless given. */
  idleCheckpoints?: number;
}

/**
 * Moves the WAL checkpoints of a SQLite file off the event loop. SQLite otherwise runs them inside the commit that
 * fills the log past 1,000 pages: copying the pages back and syncing the file held the loop for tens of ms. Here the
 * gateway's connection never checkpoints (`wal_autocheckpoint = 0`); once the log file reaches `startAtBytes` a
 * worker thread with its own connection does, every interval, until the log has been idle and it empties it and
 * ends; the next growth past `startAtBytes` starts another. Should a worker fail, the connection checkpoints by
 * itself again.
 */
export function startWalCheckpointer(path: string, database: SqliteConnection, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const intervalMs = options.intervalMs ?? WAL_CHECKPOINT_INTERVAL_MS;
  const startAtBytes = options.startAtBytes ?? WAL_WORKER_START_BYTES;
  // The file must exist already: the worker opens it read-write without creating it.
  const workerData = { location: existingFileUri(path, 'rw'), intervalMs, idleCheckpoints: options.idleCheckpoints ?? WAL_WORKER_IDLE_CHECKPOINTS };
  database.exec('pragma wal_autocheckpoint = 0');
  let stopped = false;
  let failed = false;
  let reading = false;
  let running: { worker: Worker; exited: Promise<void> } | null = null;

  const startWorker = (): void => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
    worker.unref();
    // A failing worker exits; the connection's own checkpoints take over.
    worker.on('error', () => {});
    const exited = new Promise<void>((resolve) => {
      worker.once('exit', (code) => {
        running = null;
        if (code !== 0 && !stopped) {
          failed = true;
          clearInterval(watch);
          if (database.isOpen) database.exec(`pragma wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
        }
        resolve();
      });
    });
    running = { worker, exited };
  };

  // The log's size is read off the event loop (a file system call on libuv's threads).
  const watch = setInterval(() => {
    if (running !== null || reading || stopped || failed) return;
    reading = true;
    stat(`${path}-wal`).then((file) => file.size, () => 0).then((size) => {
      reading = false;
      if (size >= startAtBytes && running === null && !stopped && !failed) startWorker();
    }, () => {
      reading = false;
    });
  }, intervalMs);
  watch.unref();

  let stopping: Promise<void> | null = null;
  return {
    stop() {
      stopping ??= (async () => {
        stopped = true;
        clearInterval(watch);
        if (database.isOpen) database.exec(`pragma wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
        const current = running;
        if (current === null) return;
        current.worker.postMessage('stop');
        const timeout = setTimeout(() => void current.worker.terminate(), STOP_TIMEOUT_MS);
        await current.exited;
        clearTimeout(timeout);
      })();
      return stopping;
    },
  };
}
