import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { issueApiKey } from './auth/api-key-format.js';
import { resolveAdminToken, rotateAdminToken } from './auth/admin-token.js';
import type { GatewayConfig } from './config/gateway-config.js';
import { deadLetterDirectory } from './usage-log/dead-letter-file.js';
import { MODELS_USAGE, modelsCommand } from './catalog/catalog-cli.js';
import { ConfigError, loadConfig } from './config/load-config.js';
import { workerAllocatorEnvironment } from './config/memory-allocator.js';
import { describeOperatorConsole, describeStartup, startGateway } from './gateway.js';
import { prepareStorage } from './gateway/prepare-storage.js';
import { relayInvalidationsBetweenWorkers } from './invalidation/cluster-invalidation-bus.js';
import { GatewayError } from './errors/gateway-error.js';
import { openSharedLimits } from './limits/shared-limits.js';
import { AccountLifecycle } from './management/account-lifecycle.js';
import { isConfigFileError } from './management/config-file-module.js';
import { systemClock } from './shared/clock.js';
import { newId } from './shared/ids.js';
import { createLogger, describeError } from './shared/logger.js';
import { OPERATOR_ROLES } from './storage/repositories/operator-repository.js';
import { migrateStorage } from './storage/open-storage.js';

const USAGE = `Usage: unigate <command>

Commands:
  serve                                   start the gateway (what npm start runs)
  migrate                                 apply database migrations and exit (under the migration lock)
  admin-token                             rotate the admin token and print the new one once
  keys create --account <email> [--name <name>] [--form sk|brand]
                                          issue an API key for an existing account and print it once
  accounts disable|enable|delete --account <email|id>
                                          disable (keys answer 403, nothing deleted), enable again, or delete
                                          (keys revoked, personal data erased, accounting kept); safe to repeat
  usage replay                            write the usage-log batches kept in <DATA_DIR>/usage-dead-letter (the
                                          database refused them) to the usage log now (a running gateway does it
                                          by itself); safe to repeat; exits 1 if any file stays
  ledger check [--account <id>]           prove the books balance (balances, key spend, subscription usage
                                          against the ledger); exits 1 on any mismatch
  operators create --email <email> --role owner|admin|support|viewer
                                          make a console user an operator (a new user gets a one-time password,
                                          printed once); operators must turn on two-factor sign-in
  operators list                          list the console's operators and their roles
  bench                                   run the benchmark (direct upstream vs through the gateway)
${MODELS_USAGE}`;

function printAdminToken(token: string): void {
  process.stdout.write(`\n  Admin token (shown once, stored hashed; rotate with "unigate admin-token"):\n\n    ${token}\n\n`);
}

async function serve(config: GatewayConfig): Promise<void> {
  const logger = createLogger(config.logLevel);
  if (config.workers > 1 && cluster.isPrimary) {
    const storage = await prepareStorage(config, {}, logger, systemClock);
    const admin = await resolveAdminToken(storage, config.adminToken, systemClock.now());
    await storage.close();
    if (admin.generated !== null) printAdminToken(admin.generated);
    logger.info('starting workers', { workers: config.workers });
    if (config.redisUrl === null) {
      relayInvalidationsBetweenWorkers();
      logger.warn('without REDIS_URL each worker counts rate limits and concurrency on its own: a key may get up to WORKERS times its limits', { workers: config.workers });
    }
    // Each worker keeps its index across restarts: it is part of the instance id its money holds are keyed by.
    const indexOf = new Map<number, number>();
    const fork = (index: number): void => {
      const worker = cluster.fork({ ...workerAllocatorEnvironment(), WORKER_INDEX: String(index) });
      indexOf.set(worker.id, index);
    };
    for (let index = 0; index < config.workers; index += 1) fork(index);
    cluster.on('exit', (worker, code, signal) => {
      const index = indexOf.get(worker.id) ?? 0;
      indexOf.delete(worker.id);
      if (signal === 'SIGTERM' || signal === 'SIGINT' || code === 0) return;
      logger.error('worker exited; starting a new one', { pid: worker.process.pid, code, signal });
      fork(index);
    });
    const stop = (): void => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway(config, { logger, applyConfiguration: cluster.isPrimary });
  } catch (error) {
    // What a failed start opened (database pools, timers, the checkpoint thread) would keep the process alive with
    // nothing listening; a process manager must see it exit, and restart it.
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  if (gateway.generatedAdminToken !== null) printAdminToken(gateway.generatedAdminToken);
  logger.info('gateway listening', { ...describeStartup(gateway), operator_console: await describeOperatorConsole(gateway) });
  const shutdown = (signal: string): void => {
    logger.info('shutting down', { signal });
    gateway.close().then(() => process.exit(0), (error: unknown) => {
      logger.error('shutdown failed', describeError(error));
      process.exit(1);
    });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

async function migrate(config: GatewayConfig): Promise<void> {
  const outcome = await migrateStorage(config.databaseUrl);
  const applied = outcome.applied.length === 0 ? 'no migration to apply: the schema holds every migration of this build' : `migrations applied: ${outcome.applied.join(', ')}`;
  const newer = outcome.newer.length === 0 ? '' : `\nthe schema is ahead of this build (applied by a newer release: ${outcome.newer.join(', ')}); this build runs on it`;
  process.stdout.write(`${applied}${newer}\n`);
}

async function adminToken(config: GatewayConfig): Promise<void> {
  const storage = await prepareStorage(config, { applyConfiguration: false }, createLogger('warn'), systemClock);
  try {
    const rotated = await rotateAdminToken(storage, systemClock.now());
    if (config.adminToken !== null) process.stderr.write('Note: ADMIN_TOKEN is set in the environment and takes precedence over the stored token.\n');
    if (rotated.generated !== null) printAdminToken(rotated.generated);
  } finally {
    await storage.close();
  }
}

async function createKey(config: GatewayConfig, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { account: { type: 'string' }, name: { type: 'string' }, form: { type: 'string' } } });
  if (values.account === undefined) throw new ConfigError('keys create needs --account <email>');
  const form = values.form ?? 'sk';
  if (form !== 'sk' && form !== 'brand') throw new ConfigError('--form must be sk or brand');
  const storage = await prepareStorage(config, { applyConfiguration: false }, createLogger('warn'), systemClock);
  try {
    const account = await storage.accounts.getByEmail(values.account.toLowerCase());
    if (account === null) throw new ConfigError(`no account with email ${values.account} (create it with POST /admin/accounts)`);
    if (account.status !== 'enabled') throw new ConfigError(`the account ${values.account} is ${account.status}: enable it first`);
    const now = systemClock.now();
    const issued = issueApiKey(form, config.keyBrand);
    const id = newId('key', now);
    await storage.keys.create({
      id, accountId: account.id, name: values.name ?? '', secretHash: issued.secretHash, displayHint: issued.displayHint, status: 'enabled',
      quotaNano: null, spentNano: 0n, allowedModels: null, ipAllowlist: null, expiresAt: null, rpm: null, tpm: null, concurrency: null,
      budget: null, allowedOrigins: null, createdAt: now, updatedAt: now, environment: null, createdBy: null, playground: false,
    });
    process.stdout.write(`key id: ${id}\nkey:    ${issued.plaintext}\n(shown once; only its hash is stored)\n`);
  } finally {
    await storage.close();
  }
}

/**
 * Changes an account's status with the same service the admin API uses. Running gateways drop the account's cached
 * keys at once when they share REDIS_URL with this command, otherwise within their key cache's refresh (1 s).
 */
async function changeAccount(config: GatewayConfig, action: 'disable' | 'enable' | 'delete', args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { account: { type: 'string' } } });
  if (values.account === undefined) throw new ConfigError(`accounts ${action} needs --account <email|id>`);
  const logger = createLogger('warn');
  const storage = await prepareStorage(config, { applyConfiguration: false }, logger, systemClock);
  const shared = await openSharedLimits(config, logger);
  try {
    const account = (await storage.accounts.getById(values.account)) ?? (await storage.accounts.getByEmail(values.account.toLowerCase()));
    if (account === null) throw new ConfigError(`no account ${values.account}`);
    const lifecycle = new AccountLifecycle({
      storage,
      keys: { invalidateAccount: (id) => shared.invalidation.publish({ kind: 'account', id }) },
      ledger: { forgetSubscription: () => undefined },
      subscriptions: { forget: () => undefined },
      clock: systemClock,
      logger,
    });
    const changed = action === 'delete' ? await lifecycle.delete(account.id) : await lifecycle.setStatus(account.id, action === 'enable' ? 'enabled' : 'disabled');
    process.stdout.write(`account ${account.id}: ${changed?.status ?? 'not found'}\n`);
  } catch (error) {
    if (error instanceof GatewayError) throw new ConfigError(error.message);
    throw error;
  } finally {
    await shared.close();
    await storage.close();
  }
}

async function operators(config: GatewayConfig, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'create' && action !== 'list') throw new ConfigError(`unknown operators command "${action ?? ''}"`);
  const { values } = parseArgs({ args: rest, options: { email: { type: 'string' }, role: { type: 'string' } } });
  const storage = await prepareStorage(config, { applyConfiguration: false }, createLogger('warn'), systemClock);
  try {
    if (action === 'list') {
      for (const operator of await storage.operators.list()) {
        const user = await storage.console.getUserById(operator.userId);
        process.stdout.write(`${operator.role.padEnd(8)} ${user?.email ?? operator.userId}${user?.totpSecret == null ? '  (two-factor not on yet)' : ''}\n`);
      }
      return;
    }
    const role = OPERATOR_ROLES.find((known) => known === values.role);
    if (values.email === undefined || role === undefined) throw new ConfigError(`operators create needs --email <email> --role ${OPERATOR_ROLES.join('|')}`);
    const password = `${randomBytes(12).toString('base64url')}-${randomBytes(6).toString('hex')}`;
    // The console's password hashing (argon2) and operator records: loaded by this command only, never by `serve`.
    const [{ grantOperator }, { hashConsolePassword }] = await Promise.all([import('./console/operator/operator-users.js'), import('./console/password-hashing.js')]);
    const { user, created } = await grantOperator(storage, { email: values.email, passwordHash: await hashConsolePassword(password), role, createdBy: null, now: systemClock.now() });
    process.stdout.write(`operator: ${user.email} (${role})\n`);
    if (created) process.stdout.write(`password: ${password}\n(shown once; change it in the console under Security, then turn on two-factor sign-in)\n`);
    else process.stdout.write('existing console user: signs in with their own password; two-factor sign-in is required for operator pages\n');
  } finally {
    await storage.close();
  }
}

async function ledgerCheck(config: GatewayConfig, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { account: { type: 'string' } } });
  const storage = await prepareStorage(config, { applyConfiguration: false }, createLogger('warn'), systemClock);
  try {
    const { checkLedger } = await import('./billing/ledger-check.js');
    const report = await checkLedger(storage, values.account);
    process.stdout.write(`${JSON.stringify({ ok: report.ok, checked: report.checked, problems: report.problems }, null, 2)}\n`);
    if (!report.ok) process.exitCode = 1;
  } finally {
    await storage.close();
  }
}

async function usageReplay(config: GatewayConfig): Promise<void> {
  const storage = await prepareStorage(config, { applyConfiguration: false }, createLogger('warn'), systemClock);
  try {
    const { replayDeadLetters } = await import('./usage-log/replay-dead-letters.js');
    const result = await replayDeadLetters(storage.usage, deadLetterDirectory(config.dataDirectory));
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (result.failed.length > 0) process.exitCode = 1;
  } finally {
    await storage.close();
  }
}

async function models(config: GatewayConfig, args: string[]): Promise<void> {
  const logger = createLogger('error');
  const storage = await prepareStorage(config, { applyConfiguration: false }, logger, systemClock);
  try {
    await modelsCommand(storage, logger, systemClock.now(), args, (text) => process.stdout.write(text));
  } finally {
    await storage.close();
  }
}

async function bench(): Promise<void> {
  const { runBench } = await import('../bench/run.js');
  if (!(await runBench()).ok) process.exitCode = 1;
}

export async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  try {
    if (command === 'help' || command === '--help' || command === '-h') {
      process.stdout.write(USAGE);
      return;
    }
    if (command === 'bench') return await bench();
    const config = loadConfig();
    switch (command) {
      case 'serve':
        return await serve(config);
      case 'migrate':
        return await migrate(config);
      case 'admin-token':
        return await adminToken(config);
      case 'ledger':
        if (rest[0] === 'check') return await ledgerCheck(config, rest.slice(1));
        throw new ConfigError(`unknown ledger command "${rest[0] ?? ''}"`);
      case 'models':
        return await models(config, rest);
      case 'usage':
        if (rest[0] === 'replay') return await usageReplay(config);
        throw new ConfigError(`unknown usage command "${rest[0] ?? ''}"`);
      case 'accounts':
        if (rest[0] === 'disable' || rest[0] === 'enable' || rest[0] === 'delete') return await changeAccount(config, rest[0], rest.slice(1));
        throw new ConfigError(`unknown accounts command "${rest[0] ?? ''}"`);

      case 'operators':
        return await operators(config, rest);
      case 'keys':
        if (rest[0] === 'create') return await createKey(config, rest.slice(1));
        throw new ConfigError(`unknown keys command "${rest[0] ?? ''}"`);
      default:
        throw new ConfigError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof ConfigError || isConfigFileError(error)) {
      process.stderr.write(`error: ${error.message}\n\n${USAGE}`);
    } else {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    process.exitCode = 1;
  }
}
