/** Catalog.reload: a reload asked for while one runs must see writes made before it was asked for. */
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/routing/catalog.js';
import { createLogger } from '../../../src/shared/logger.js';
import type { Channel } from '../../../src/domain/records.js';
import type { Model } from '../../../src/domain/model-records.js';
import type { Storage } from '../../../src/storage/storage.js';

/** Storage whose reads take a snapshot at call time and answer only when released. */
function slowStorage(): { storage: Storage; models: Model[]; reads: () => number; release: () => void } {
  const models: Model[] = [];
  const held: Array<() => void> = [];
  let reads = 0;
  const storage = {
    channels: { listAll: async (): Promise<Channel[]> => [] },
    models: {
      listAll: (): Promise<Model[]> => {
        reads += 1;
        const snapshot = [...models];
        return new Promise((resolve) => held.push(() => resolve(snapshot)));
      },
    },
  } as unknown as Storage;
  return { storage, models, reads: () => reads, release: () => held.splice(0).forEach((resolve) => resolve()) };
}

const model = (id: string): Model => ({ id, kind: 'chat', public: true, upstream: null, pricing: {}, limits: {} }) as unknown as Model;

async function settle(release: () => void, until: Promise<void>): Promise<void> {
  let done = false;
  void until.then(() => (done = true));
  for (let round = 0; round < 20 && !done; round += 1) {
    release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await until;
}

describe('Catalog.reload', () => {
  it('runs one more load after the running one for callers that arrive while it runs', async () => {
    const { storage, models, reads, release } = slowStorage();
    const catalog = new Catalog(storage, createLogger('error'), () => true);
    const first = catalog.reload();
    models.push(model('added-while-loading'));
    const second = catalog.reload();
    const third = catalog.reload();
    expect(third).toBe(second);
    await settle(release, Promise.all([first, second]).then(() => undefined));
    expect(reads()).toBe(2);
    expect(catalog.model('added-while-loading')?.id).toBe('added-while-loading');
  });

  it('coalesces nothing when no load is running', async () => {
    const { storage, models, reads, release } = slowStorage();
    const catalog = new Catalog(storage, createLogger('error'), () => true);
    models.push(model('m1'));
    await settle(release, catalog.reload());
    expect(reads()).toBe(1);
    expect(catalog.models().map((entry) => entry.id)).toEqual(['m1']);
  });
});
