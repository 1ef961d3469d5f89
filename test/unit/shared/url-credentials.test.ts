import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../../src/console/operator/audit-redaction.js';
import { hasUrlCredentials, withoutUrlCredentials } from '../../../src/shared/url-credentials.js';

describe('credentials in URLs', () => {
  it('are found in a URL with a user name, a password or both, and nowhere else', () => {
    expect(hasUrlCredentials('https://user:pw@host.example/v1')).toBe(true);
    expect(hasUrlCredentials('http://token@10.0.0.5:8000')).toBe(true);
    expect(hasUrlCredentials('https://:pw@host.example')).toBe(true);
    expect(hasUrlCredentials('https://host.example/v1?user=a@b')).toBe(false);
    expect(hasUrlCredentials('not a url')).toBe(false);
  });

  it('are removed from every http(s) URL in a text, leaving the rest', () => {
    expect(withoutUrlCredentials('https://user:pw@host.example/v1')).toBe('https://host.example/v1');
    expect(withoutUrlCredentials('{"base_url":"http://k@h:1/x","email":"ops@example.com","next":"https://a:b@c.example"}'))
      .toBe('{"base_url":"http://h:1/x","email":"ops@example.com","next":"https://c.example"}');
    expect(withoutUrlCredentials('https://host.example/path?who=a@b')).toBe('https://host.example/path?who=a@b');
  });

  it('never reach the audit log', () => {
    expect(redactSecrets({ base_url: 'https://u:SECRET@llm.example.com/v1', nested: [{ url: 'http://SECRET@x.example' }], api_key: 'sk' }))
      .toEqual({ base_url: 'https://llm.example.com/v1', nested: [{ url: 'http://x.example' }], api_key: '[redacted]' });
  });
});
