import type { FileContentStore } from '../domain/files.js';

/**
 * New files go to `primary`; files kept before it was configured stay readable from `earlier` (the database, when a
 * bucket is added to a running deployment) and are deleted from both.
 */
export function layeredFileStore(primary: FileContentStore, earlier: FileContentStore): FileContentStore {
  return {
    name: primary.name,
    put: (fileId, content) => primary.put(fileId, content),
    async get(fileId) {
      return (await primary.get(fileId)) ?? earlier.get(fileId);
    },
    async open(fileId) {
      return (await primary.open(fileId)) ?? earlier.open(fileId);
    },
    async delete(fileIds) {
      await Promise.all([primary.delete(fileIds), earlier.delete(fileIds)]);
    },
  };
}
