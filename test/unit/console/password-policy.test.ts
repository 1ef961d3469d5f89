import { describe, expect, it } from 'vitest';
import { passwordProblem } from '../../../src/console/password-policy.js';

const EMAIL = 'maria.lopez@example.com';

describe('the console password policy', () => {
  it.each([
    ['too short', 'Sh0rt!pw'],
    ['a common word with digits', 'password2024'],
    ['a common word de-leeted', 'P@ssw0rd!!99'],
    ['a repeated common word', 'monkeymonkey'],
    ['a keyboard run', 'qwertyuiop'],
    ['a digit run', '0987654321'],
    ['a long common password', '1q2w3e4r5t6y'],
    ['the email\'s name', 'maria.lopez-rocks'],
    ['the email itself', EMAIL],
    ['too few characters', 'aaaaaaaaaabbbbbb'],
    ['a short repeated pattern', 'ab12ab12ab12'],
    ['digits only and short', '8273619450'],
    ['the product name', 'Unigate2025!'],
  ])('refuses %s', (_reason, candidate) => {
    expect(passwordProblem(candidate, EMAIL)).not.toBeNull();
  });

  it.each([
    'correct horse battery staple',
    'Tide-3f9a2c-Lantern',
    'x9!Kp2#vQ7mz',
    '8273619450172635',
  ])('accepts %s', (candidate) => {
    expect(passwordProblem(candidate, EMAIL)).toBeNull();
  });

  it('never repeats the password in its message', () => {
    const candidate = 'password2024';
    expect(passwordProblem(candidate, EMAIL)).not.toContain(candidate);
  });
});
