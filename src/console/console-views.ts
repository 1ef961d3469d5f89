import { nanoToUsd } from '../billing/money.js';
import { isoTime } from '../management/time-input.js';
import { signUpCreditView } from '../sign-up-credit/grant-sign-up-credit.js';
import type { ConsoleSession, ConsoleUser } from '../storage/repositories/console-repository.js';
import type { ConsoleDeps } from './console-deps.js';
import type { ConsoleAccountJson, ConsoleUserJson, SessionRowJson } from '../contract/account.js';

export function userJson(user: ConsoleUser): ConsoleUserJson {
  return {
    id: user.id,
    email: user.email,
    email_verified: user.emailVerifiedAt !== null,
    two_factor_enabled: user.totpSecret !== null,
    created_at: isoTime(user.createdAt),
  };
}

/** The signed-in account as the console shows it (balance as available now, pending charges included). */
export async function accountJson(deps: ConsoleDeps, accountId: string): Promise<ConsoleAccountJson | null> {
  const account = await deps.services.storage.accounts.getById(accountId);
  if (account === null) return null;
  return {
    id: account.id,
    email: account.email,
    balance_usd: nanoToUsd(await deps.services.ledger.availableBalance(account.id)),
    tier: account.tier,
    status: account.status,
    sign_up_credit: await signUpCreditView(deps.services, account),
  };
}

/** A short, human name for the browser and system of a user agent ("Firefox on Linux"). */
export function describeDevice(userAgent: string): string {
  if (userAgent === '') return 'Unknown device';
  const browser = /Edg\//.test(userAgent) ? 'Edge'
    : /OPR\//.test(userAgent) ? 'Opera'
      : /Firefox\//.test(userAgent) ? 'Firefox'
        : /Chrome\/|Chromium\//.test(userAgent) ? 'Chrome'
          : /Safari\//.test(userAgent) ? 'Safari'
            : userAgent.split(/[\s/]/)[0] ?? 'Browser';
  const system = /Windows/.test(userAgent) ? 'Windows'
    : /iPhone|iPad/.test(userAgent) ? 'iOS'
      : /Mac OS X|Macintosh/.test(userAgent) ? 'macOS'
        : /Android/.test(userAgent) ? 'Android'
          : /Linux/.test(userAgent) ? 'Linux'
            : null;
  return system === null ? browser : `${browser} on ${system}`;
}

export function sessionJson(session: ConsoleSession, currentId: string): SessionRowJson {
  return {
    id: session.id,
    device: describeDevice(session.userAgent),
    user_agent: session.userAgent,
    ip: session.ip,
    created_at: isoTime(session.createdAt),
    last_seen_at: isoTime(session.lastSeenAt),
    current: session.id === currentId,
  };
}
