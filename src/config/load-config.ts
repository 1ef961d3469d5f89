import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import type { LogLevel } from '../shared/logger.js';
import type { GatewayConfig, ProviderShortcut, TrustProxy } from './gateway-config.js';

export const PRODUCT_ENV_PREFIX = 'UNIGATE_';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Environment = Record<string, string | undefined>;

/** Reads `UNIGATE_<NAME>` first, then `<NAME>`; empty strings count as unset. */
function read(env: Environment, name: string): string | undefined {
  const value = env[PRODUCT_ENV_PREFIX + name] ?? env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function readInteger(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function readTrustProxy(env: Environment): TrustProxy {
  const raw = read(env, 'TRUST_PROXY');
  if (raw === undefined || raw === 'false' || raw === 'none') return { mode: 'none' };
  if (raw === 'true' || raw === 'all') return { mode: 'all' };
  const ranges = raw.split(',').map((entry) => entry.trim()).filter(Boolean);
  for (const range of ranges) {
    const [address, prefix] = range.split('/');
    if (address === undefined || isIP(address) === 0 || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) {
      throw new ConfigError(`TRUST_PROXY entry "${range}" is not an IP address or CIDR range`);
    }
  }
  return { mode: 'list', ranges };
}

function readProvider(env: Environment, name: string): ProviderShortcut | null {
  const apiKey = read(env, `${name}_API_KEY`);
  if (apiKey === undefined) return null;
  return { apiKey, baseUrl: read(env, `${name}_BASE_URL`) ?? null };
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** The only place that reads the environment. Validated once at start. */
export function loadConfig(env: Environment = process.env, cwd: string = process.cwd()): GatewayConfig {
  const dataDirectory = path.resolve(cwd, read(env, 'DATA_DIR') ?? './data');
  const defaultConfigFile = path.resolve(cwd, 'gateway.yaml');
  const configFile = read(env, 'GATEWAY_CONFIG') ?? (existsSync(defaultConfigFile) ? defaultConfigFile : null);
  const databaseUrl = read(env, 'DATABASE_URL') ?? `sqlite:${path.join(dataDirectory, 'gateway.db')}`;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
  }
  const logLevel = (read(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const keyBrand = read(env, 'KEY_BRAND') ?? 'unigate';
  if (!/^[a-z][a-z0-9]{1,15}$/.test(keyBrand)) throw new ConfigError('KEY_BRAND must be 2-16 lowercase letters or digits');

  return {
    host: read(env, 'HOST') ?? '127.0.0.1',
    port: readInteger(env, 'PORT', 8080, 0, 65535),
    consolePort: readInteger(env, 'CONSOLE_PORT', 8081, 0, 65535),
    databaseUrl,
    redisUrl: read(env, 'REDIS_URL') ?? null,
    adminToken: read(env, 'ADMIN_TOKEN') ?? null,
    configFile: configFile === null ? null : path.resolve(cwd, configFile),
    smtpUrl: read(env, 'SMTP_URL') ?? null,
    workers: readInteger(env, 'WORKERS', 1, 1, 64),
    dataDirectory,
    secretKey: read(env, 'SECRET_KEY') ?? null,
    trustProxy: readTrustProxy(env),
    maxBodyBytes: readInteger(env, 'MAX_BODY_BYTES', 10 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    keyBrand,
    publicRateLimitPerMinute: readInteger(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    fxSourceUrl: read(env, 'FX_SOURCE_URL') ?? null,
    fxRefreshSeconds: readInteger(env, 'FX_REFRESH_SECONDS', 3600, 10, 86_400 * 7),
    logLevel,
    providers: {
      openai: readProvider(env, 'OPENAI'),
      anthropic: readProvider(env, 'ANTHROPIC'),
      gemini: readProvider(env, 'GEMINI'),
    },
  };
}
