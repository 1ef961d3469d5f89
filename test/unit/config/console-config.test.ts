import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

describe('console configuration', () => {
  it('defaults: the listeners\' own addresses, sign-up open', () => {
    expect(loadConfig({}, '/tmp')).toMatchObject({ consoleUrl: null, apiPublicUrl: null, consoleSignUp: true });
  });

  it('reads CONSOLE_URL and API_PUBLIC_URL as origins, and CONSOLE_SIGN_UP', () => {
    const config = loadConfig({ CONSOLE_URL: 'https://Console.Example.com/', UNIGATE_API_PUBLIC_URL: 'https://api.example.com:8443', CONSOLE_SIGN_UP: 'false' }, '/tmp');
    expect(config).toMatchObject({ consoleUrl: 'https://console.example.com', apiPublicUrl: 'https://api.example.com:8443', consoleSignUp: false });
  });

  it('refuses what is not an http(s) origin', () => {
    for (const env of [
      { CONSOLE_URL: 'console.example.com' }, { CONSOLE_URL: 'ftp://console.example.com' }, { CONSOLE_URL: 'https://example.com/console' },
      { CONSOLE_URL: 'https://user:pw@example.com' }, { API_PUBLIC_URL: 'https://api.example.com/v1' }, { CONSOLE_SIGN_UP: 'maybe' },
    ]) {
      expect(() => loadConfig(env, '/tmp'), JSON.stringify(env)).toThrow(ConfigError);
    }
  });
});
