import type { GatewayConfig } from '../config/gateway-config.js';
import { resolveSecretKey } from '../config/secret-key.js';
import { configFileModule } from '../management/config-file-module.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { SecretBox } from '../shared/secret-box.js';
import type { SqliteWriteObserver } from '../storage/dialects.js';
import { openStorage } from '../storage/open-storage.js';
import type { Storage } from '../storage/storage.js';

/** How storage is opened at a start (and by the `unigate` commands that open it alone). */
export interface StorageOptions {
  /** Apply gateway.yaml and provider shortcuts (the primary does it once when there are several workers). */
  applyConfiguration?: boolean;
  /** Environment for `${VAR}` expansion in gateway.yaml. */
  env?: Record<string, string | undefined>;
  /** Apply pending migrations; defaults to MIGRATE_ON_START (`unigate migrate` always does). */
  migrate?: boolean;
  /** SQLite: told how long each batched write transaction held the event loop. */
  observeWrite?: SqliteWriteObserver;
}

/**
 * Keeps new files' bytes in the configured bucket (files kept before stay readable from the database). The bucket's
 * client is loaded only when one is configured; it closes with the storage.
 */
async function attachFileStore(storage: Storage, config: GatewayConfig, logger: Logger): Promise<void> {
  const settings = config.batches.fileStore;
  if (settings.kind !== 's3') return;
  const [{ createS3FileStore }, { layeredFileStore }] = await Promise.all([import('../file-stores/s3-file-store.js'), import('../file-stores/layered-file-store.js')]);
  const bucket = createS3FileStore(settings);
  storage.fileContents = layeredFileStore(bucket, storage.fileContents);
  const closeStorage = storage.close.bind(storage);
  storage.close = async () => {
    await bucket.close();
    await closeStorage();
  };
  logger.info('file bytes kept in an S3 bucket', { endpoint: settings.endpoint, bucket: settings.bucket, prefix: settings.keyPrefix });
}

/** Opens storage and brings it to the configured state: migrations, gateway.yaml, provider shortcuts. */
export async function prepareStorage(config: GatewayConfig, options: StorageOptions, logger: Logger, clock: Clock): Promise<Storage> {
  const secret = resolveSecretKey(config.secretKey, config.dataDirectory);
  if (secret.source === 'generated') logger.info('generated a key for encrypting upstream credentials', { file: `${config.dataDirectory}/secret.key` });
  const storage = await openStorage({
    url: config.databaseUrl,
    secretBox: new SecretBox(secret.key),
    migrate: options.migrate ?? config.migrateOnStart,
    ...(options.observeWrite === undefined ? {} : { observeWrite: options.observeWrite }),
  });
  await attachFileStore(storage, config, logger);
  if (options.applyConfiguration ?? true) {
    try {
      // The config file's and the shortcuts' modules (and the input schemas they share) load only when either is set.
      if (config.configFile !== null) {
        const { applyConfigFile } = await configFileModule.get();
        const applied = await applyConfigFile(config.configFile, storage, clock, options.env ?? process.env);
        logger.info('applied config file', { file: config.configFile, ...applied });
      }
      if (Object.values(config.providers).some((shortcut) => shortcut !== null)) {
        const { applyProviderShortcuts } = await import('../management/apply-provider-shortcuts.js');
        const shortcuts = await applyProviderShortcuts(config, storage, clock);
        if (shortcuts.length > 0) logger.info('provider env shortcuts applied', { channels: shortcuts });
      }
    } catch (error) {
      await storage.close();
      throw error;
    }
  }
  return storage;
}
