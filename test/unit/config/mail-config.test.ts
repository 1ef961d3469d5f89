import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';
import { createMailer } from '../../../src/mail/create-mailer.js';
import { createLogger } from '../../../src/shared/logger.js';

describe('mail and alert configuration', () => {
  it('defaults: no SMTP (mails go to the log), a brand sender, checks every 30 s', () => {
    const config = loadConfig({}, '/tmp');
    expect(config).toMatchObject({ smtpUrl: null, mailFrom: 'unigate <noreply@localhost>', alertCheckSeconds: 30 });
    const lines: string[] = [];
    const mailer = createMailer(config, createLogger('info', (line) => lines.push(line)));
    expect(mailer.kind).toBe('log');
  });

  it('reads SMTP_URL, MAIL_FROM and ALERT_CHECK_SECONDS, also with the UNIGATE_ prefix', () => {
    const config = loadConfig({ UNIGATE_SMTP_URL: 'smtps://user:pa%40ss@mail.example.com:465', MAIL_FROM: 'Alerts <alerts@example.com>', ALERT_CHECK_SECONDS: '5' }, '/tmp');
    expect(config).toMatchObject({ smtpUrl: 'smtps://user:pa%40ss@mail.example.com:465', mailFrom: 'Alerts <alerts@example.com>', alertCheckSeconds: 5 });
    expect(createMailer(config, createLogger('error', () => {})).kind).toBe('smtp');
    expect(loadConfig({ MAIL_FROM: 'ops@example.com' }, '/tmp').mailFrom).toBe('ops@example.com');
  });

  it('refuses what cannot work, without echoing the SMTP password', () => {
    for (const env of [{ SMTP_URL: 'http://mail.example.com' }, { SMTP_URL: 'not a url' }, { MAIL_FROM: 'nobody' }, { MAIL_FROM: 'A <b>' }, { ALERT_CHECK_SECONDS: '0' }]) {
      expect(() => loadConfig(env, '/tmp'), JSON.stringify(env)).toThrow(ConfigError);
    }
    try {
      loadConfig({ SMTP_URL: 'imap://user:hunter2@mail.example.com' }, '/tmp');
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain('hunter2');
    }
  });

  it('the log mailer writes the recipient and subject only', async () => {
    const lines: string[] = [];
    const mailer = createMailer({ smtpUrl: null, mailFrom: 'x@y.z' }, createLogger('info', (line) => lines.push(line)));
    await mailer.send({ to: 'owner@example.com', subject: 'Balance alert', text: 'secret body' });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ level: 'info', message: 'mail not sent (SMTP_URL is not set)', to: 'owner@example.com', subject: 'Balance alert' });
    expect(lines[0]).not.toContain('secret body');
  });
});
