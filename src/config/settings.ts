/** Reads one setting by name: its value, or undefined when it is not set. */
export type ReadSetting = (name: string) => string | undefined;

/**
 * A setting of one part's configuration (batches, webhooks, telemetry …) is malformed: the message names the
 * variable and what it must be. Each part's errors extend it, and `loadConfig` reports any of them as a ConfigError.
 */
export class SettingError extends Error {
  override name = 'SettingError';
}

/** An integer setting from `min` to `max`; `fallback` when it is not set. */
export function integerSetting(read: ReadSetting, name: string, fallback: number, min: number, max: number): number {
  const raw = read(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new SettingError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

/** A setting that is true or false (also 1 or 0); false when it is not set. */
export function booleanSetting(read: ReadSetting, name: string): boolean {
  const raw = read(name);
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new SettingError(`${name} must be true or false, got "${raw}"`);
}
