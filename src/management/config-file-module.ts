import { loadOnce } from '../shared/load-once.js';

/**
 * The config file's reader and its validation schemas (GATEWAY_CONFIG), loaded only where a config file is applied:
 * a gateway started without one never holds them. Its error class is recognised through `loaded()`: an error of
 * the config file can only come once the module is loaded.
 */
export const configFileModule = loadOnce(() => import('./apply-config-file.js'));

/** The error is the config file's (it names a bad entry or value); false before the module is loaded. */
export function isConfigFileError(error: unknown): error is Error {
  const loaded = configFileModule.loaded();
  return loaded !== null && error instanceof loaded.ConfigFileError;
}
