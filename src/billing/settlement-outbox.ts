import { readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { NanoUsd } from '../domain/records.js';
import type { UsageLogRow } from '../domain/usage-records.js';
import { syncDirectory, writeDurableFile } from '../shared/durable-file.js';
import { decodeUsageRow, encodeUsageRow } from '../usage-log/usage-row-json.js';
import type { Settlement } from './batch-settling.js';
import { decodeReservation, encodeReservation } from './stream-checkpoints.js';

/** Folder of the data directory holding settlements the database could not take yet, one sub-folder per instance id. */
export const SETTLEMENT_OUTBOX_FOLDER = 'settlement-outbox';

/** A settlement with the usage row of its request (null: a hold released with nothing to log). */
export interface KeptSettlement extends Settlement {
  usageRow: UsageLogRow | null;
}

/** One file of kept settlements. */
export interface KeptFile {
  file: string;
  settlements: KeptSettlement[];
}

/** What the outbox holds: its files, and those set aside because they could not be read (names). */
export interface KeptFiles {
  files: KeptFile[];
  unreadable: string[];
}

interface EncodedSettlement {
  requestId: string;
  costNano: string;
  createdAt: number;
  checkpointed: boolean;
  reservation: string;
  usageRow: string | null;
}

/** The instance's own folder: a restart of the same instance id applies what its previous run kept. */
export function settlementOutboxDirectory(dataDirectory: string, instanceId: string): string {
  return path.join(dataDirectory, SETTLEMENT_OUTBOX_FOLDER, instanceId.replace(/[^A-Za-z0-9._-]/g, '_'));
}

export function encodeKeptSettlement(settlement: KeptSettlement): string {
  const encoded: EncodedSettlement = {
    requestId: settlement.requestId,
    costNano: settlement.costNano.toString(),
    createdAt: settlement.createdAt,
    checkpointed: settlement.checkpointed === true,
    reservation: encodeReservation(settlement.reservation),
    usageRow: settlement.usageRow === null ? null : encodeUsageRow(settlement.usageRow),
  };
  return JSON.stringify(encoded);
}

export function decodeKeptSettlement(line: string): KeptSettlement {
  const raw = JSON.parse(line) as EncodedSettlement;
  if (typeof raw.requestId !== 'string' || typeof raw.costNano !== 'string' || !/^-?\d+$/.test(raw.costNano) || typeof raw.reservation !== 'string') {
    throw new Error('not a kept settlement');
  }
  const costNano: NanoUsd = BigInt(raw.costNano);
  return {
    requestId: raw.requestId,
    costNano,
    createdAt: raw.createdAt,
    ...(raw.checkpointed ? { checkpointed: true } : {}),
    reservation: decodeReservation(raw.reservation),
    usageRow: raw.usageRow === null ? null : decodeUsageRow(raw.usageRow),
  };
}

/**
 * Settlements the database could not take, kept on local disk until it does: each batch in a file of its own
 * (`<epoch ms>-<random>.jsonl`, one settlement a line with its usage row), fsync'd before `keep` resolves. A file is
 * removed once every settlement in it is committed. Applying a kept settlement twice moves money once: its ledger
 * entry's id (the reservation's entry id) is the idempotency key, and its usage row's request id too.
 */
export class SettlementOutbox {
  constructor(readonly directory: string) {}

  /** Writes the settlements to a new file, on disk when this resolves; returns the file. */
  keep(settlements: readonly KeptSettlement[], now: number): Promise<string> {
    return writeDurableFile(this.directory, `${settlements.map(encodeKeptSettlement).join('\n')}\n`, now, '.jsonl');
  }

  /**
   * Every kept file, oldest first (none when the folder does not exist). A file that cannot be read as kept
   * settlements (damaged on disk) is renamed `<name>.unreadable`, left for the operator and named in `unreadable`,
   * so it neither blocks the start nor is retried.
   */
  async list(): Promise<KeptFiles> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { files: [], unreadable: [] };
      throw error;
    }
    // A write cut short by a crash never counted: its settlements were still queued in memory, and are lost with it
    // only if they were lost anyway.
    for (const name of names.filter((entry) => entry.startsWith('.') && entry.endsWith('.partial'))) await rm(path.join(this.directory, name), { force: true });
    const files: KeptFile[] = [];
    const unreadable: string[] = [];
    for (const name of names.filter((entry) => entry.endsWith('.jsonl') && !entry.startsWith('.')).sort()) {
      const file = path.join(this.directory, name);
      const text = await readFile(file, 'utf8');
      try {
        files.push({ file, settlements: text.split('\n').filter((line) => line.trim() !== '').map(decodeKeptSettlement) });
      } catch {
        await rename(file, `${file}.unreadable`);
        unreadable.push(`${name}.unreadable`);
      }
    }
    return { files, unreadable };
  }

  /** Removes files whose settlements are all committed. */
  async remove(files: readonly string[]): Promise<void> {
    if (files.length === 0) return;
    for (const file of files) await rm(file, { force: true });
    await syncDirectory(this.directory);
  }
}
