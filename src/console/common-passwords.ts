/**
 * Words at the heart of the passwords that lead every published breach corpus. A password is refused when, once
 * lower-cased, de-leeted and stripped of leading and trailing digits and symbols, it is one of these or a
 * repetition of one ("passwordpassword"), or when it is itself in the list of long common passwords below.
 */
export const COMMON_PASSWORD_WORDS: ReadonlySet<string> = new Set([
  'password', 'passwort', 'passw', 'pass', 'qwerty', 'qwertz', 'azerty', 'qwertyuiop', 'asdfgh', 'asdfghjkl', 'zxcvbnm', 'zxcvbn',
  'letmein', 'welcome', 'iloveyou', 'admin', 'administrator', 'root', 'login', 'master', 'dragon', 'monkey', 'football',
  'baseball', 'basketball', 'soccer', 'hockey', 'sunshine', 'princess', 'shadow', 'superman', 'batman', 'spiderman',
  'michael', 'jennifer', 'jessica', 'charlie', 'thomas', 'jordan', 'hunter', 'ranger', 'buster', 'tigger', 'daniel',
  'computer', 'internet', 'whatever', 'starwars', 'trustno', 'freedom', 'secret', 'changeme', 'default', 'guest',
  'test', 'tester', 'testing', 'hello', 'helloworld', 'abc', 'abcd', 'abcdef', 'abcdefg', 'abcdefgh', 'abcdefghij',
  'qazwsx', 'qazwsxedc', 'zaqxsw', 'mustang', 'harley', 'ferrari', 'porsche', 'mercedes', 'summer', 'winter', 'spring',
  'autumn', 'love', 'lovely', 'loveme', 'flower', 'cookie', 'chocolate', 'banana', 'orange', 'pepper', 'ginger',
  'killer', 'pokemon', 'minecraft', 'fortnite', 'naruto', 'samsung', 'apple', 'google', 'facebook', 'twitter',
  'linkedin', 'microsoft', 'windows', 'matrix', 'access', 'ashley', 'nicole', 'daniel', 'andrew', 'joshua', 'anthony',
  'maggie', 'purple', 'silver', 'golden', 'diamond', 'yankees', 'liverpool', 'chelsea', 'arsenal', 'barcelona',
  'unigate', 'gateway', 'console', 'openai', 'chatgpt', 'anthropic', 'claude', 'gemini',
]);

/** Long passwords (10+ characters) that appear near the top of breach corpora as they are. */
export const COMMON_LONG_PASSWORDS: ReadonlySet<string> = new Set([
  '1234567890', '0123456789', '0987654321', '9876543210', '1234512345', '1234554321', '1122334455', '1111111111',
  '123456789a', 'a123456789', '1q2w3e4r5t', '1q2w3e4r5t6y', '1qaz2wsx3edc', 'zaq12wsxcde3', '1qazxsw23edc', 'q1w2e3r4t5',
  'q1w2e3r4t5y6', 'qwer1234asdf', '1234qwerasdf', 'asdf1234qwer', 'qwertyuiop123', 'qwerty123456', '123qweasdzxc',
  'zxcvbnm123', 'asdfghjkl123', 'iloveyou123', 'abc123abc123', '123abc123abc', 'aaaaaaaaaa', 'qweasdzxc123',
]);
