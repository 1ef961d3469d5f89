import type { FileBody, StoredFile } from '../domain/files.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Storage } from '../storage/storage.js';

/**
 * Records the file within the account's quota (`quotaBytes`), then its bytes; the record goes again when the bytes
 * cannot be kept, so no file is listed without its content.
 */
export async function keepFile(storage: Storage, file: StoredFile, content: FileBody, quotaBytes: number): Promise<void> {
  if (!(await storage.files.insertWithinQuota(file, quotaBytes, file.createdAt))) {
    throw new GatewayError('file_quota_exceeded', `This file (${file.bytes} bytes) would take the account's files past their quota of ${quotaBytes} bytes. Delete files or wait for some to expire.`, { param: 'file' });
  }
  try {
    await storage.fileContents.put(file.id, content);
  } catch (error) {
    await storage.files.delete(file.accountId, file.id);
    throw error;
  }
}
