import { GatewayError } from '../errors/gateway-error.js';
import { COMMON_LONG_PASSWORDS, COMMON_PASSWORD_WORDS } from './common-passwords.js';

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

const LEET: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's', '!': 'i' };
const SEQUENCES = ['0123456789', 'abcdefghijklmnopqrstuvwxyz', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm', '1qaz2wsx3edc4rfv'];

/** The word inside a password: lower case, leading and trailing digits and symbols gone, leet letters undone. */
function coreWord(password: string): string {
  const stripped = password.toLowerCase().replace(/^[^a-z]+|[^a-z]+$/g, '');
  return [...stripped].map((char) => LEET[char] ?? char).join('');
}

/** True when the text is one unit repeated ("abcabcabc", "passwordpassword"). */
function repeatedUnit(text: string): string | null {
  for (let size = 1; size <= text.length / 2; size += 1) {
    if (text.length % size !== 0) continue;
    const unit = text.slice(0, size);
    if (unit.repeat(text.length / size) === text) return unit;
  }
  return null;
}

/** Forward or backward run along a keyboard row or the alphabet/digits ("abcdefghij", "0987654321"). */
function isSequence(text: string): boolean {
  const lower = text.toLowerCase();
  return SEQUENCES.some((sequence) => sequence.includes(lower) || [...sequence].reverse().join('').includes(lower));
}

/** Why a password is refused, or null. Never logs or echoes the password. */
export function passwordProblem(password: string, email: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `Passwords need at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH) return `Passwords have at most ${PASSWORD_MAX_LENGTH} characters.`;
  const lower = password.toLowerCase();
  const local = email.toLowerCase().split('@')[0] ?? '';
  if (lower === email.toLowerCase() || (local.length >= 4 && lower.includes(local))) return 'The password must not contain your email address.';
  if (new Set(lower).size < 4) return 'The password uses too few different characters.';
  if (COMMON_LONG_PASSWORDS.has(lower) || isSequence(password)) return 'This password is among the most common ones; choose another.';
  const word = coreWord(password);
  const unit = word === '' ? '' : (repeatedUnit(word) ?? word);
  if (word === '' && password.length < 16) return 'A password without letters needs at least 16 characters.';
  if (COMMON_PASSWORD_WORDS.has(word) || COMMON_PASSWORD_WORDS.has(unit) || (word !== '' && isSequence(word))) {
    return 'This password is a common word with digits or symbols around it; choose another.';
  }
  const digitsUnit = repeatedUnit(lower);
  if (digitsUnit !== null && digitsUnit.length <= 4) return 'The password repeats a short pattern.';
  return null;
}

/** Throws 400 weak_password naming the field when the password is refused. */
export function assertStrongPassword(password: string, email: string, field: string): void {
  const problem = passwordProblem(password, email);
  if (problem !== null) throw new GatewayError('weak_password', problem, { param: field });
}
