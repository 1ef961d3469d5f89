import { Secret, TOTP } from 'otpauth';

const PERIOD_SECONDS = 30;

function totpFor(secretBase32: string, issuer: string, label: string): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });
}

/** A fresh 160-bit secret (RFC 4226's recommended size), base32 as authenticator apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export interface TotpEnrolment {
  secret: string;
  otpauthUrl: string;
  qrSvg: string;
}

export async function describeEnrolment(secretBase32: string, issuer: string, email: string): Promise<TotpEnrolment> {
  const otpauthUrl = totpFor(secretBase32, issuer, email).toString();
  // Loaded when someone enrols, not at start-up.
  const { default: QRCode } = await import('qrcode');
  return { secret: secretBase32, otpauthUrl, qrSvg: await QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }) };
}

/**
 * The time step a 6-digit code belongs to, when it is valid at `now` within one step of clock drift either way;
 * null otherwise. The caller refuses a step it has already accepted (a replayed code).
 */
export function matchTotpStep(secretBase32: string, code: string, now: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpFor(secretBase32, 'unigate', 'user').validate({ token: code, timestamp: now, window: 1 });
  if (delta === null) return null;
  return Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
}
