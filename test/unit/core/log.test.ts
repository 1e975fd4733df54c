/**
 * What reaches a log line (log.ts): the API key and RTC tokens never do, whether they come as an
 * `Authorization: Token …` header, a JSON field however it is spaced, or a registered secret anywhere in
 * the message or its data; and each level is written, or not, as the logger's level says. How the set of
 * registered tokens stays bounded over weeks of sessions is log-secrets.test.ts (it needs a fresh set, so a
 * process of its own).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addSecret, createLogger, logLevelFromEnv, redact, redactData, secretCount, type LogLevel } from '../../../electron/core/log.ts';

const ISO_PREFIX = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z /;

/** A logger writing into an array; lines come back without their timestamp, which is checked here. */
function capture(options: { level?: LogLevel; scope?: string } = {}) {
  const raw: string[] = [];
  const logger = createLogger({ ...options, sink: (line) => raw.push(line) });
  const lines = () =>
    raw.map((line) => {
      assert.match(line, ISO_PREFIX);
      return line.replace(ISO_PREFIX, '');
    });
  return { logger, lines };
}

describe('redact', () => {
  describe('an Authorization header value', () => {
    it('masks the key after "Token " and keeps the rest of the line', () => {
      assert.equal(redact('GET /live/v1/lives Authorization: Token sk-AbC.123_~+/=-x done'), 'GET /live/v1/lives Authorization: Token *** done');
    });
    it('masks it after several spaces too', () => {
      assert.equal(redact('Authorization: Token   sk-abc123'), 'Authorization: Token   ***');
    });
    it('masks each occurrence', () => {
      assert.equal(redact('Token aaa1 then Token bbb2'), 'Token *** then Token ***');
    });
  });

  describe('a secret-named JSON field', () => {
    it('masks the value whatever the spacing around the colon', () => {
      for (const text of ['{"token":"rtc-field-1"}', '{"token" : "rtc-field-1"}', '{"token":  "rtc-field-1"}', '{"token"\t:"rtc-field-1"}']) {
        assert.equal(redact(text), '{"token":"***"}', text);
      }
    });
    it('masks every secret-named field and leaves the others', () => {
      const text = '{"api_key":"k1-zz","apiKey":"k2-zz","authorization":"a1-zz","Authorization":"a2-zz","key":"k3-zz","user_id":"live-user-1"}';
      assert.equal(redact(text), '{"api_key":"***","apiKey":"***","authorization":"***","Authorization":"***","key":"***","user_id":"live-user-1"}');
    });
    it('masks an empty value too, and stops at the closing quote', () => {
      assert.equal(redact('{"token":"","live_id":"L1"}'), '{"token":"***","live_id":"L1"}');
    });
  });

  describe('registered secrets', () => {
    it('masks a secret of six characters or more wherever it appears', () => {
      addSecret('sixsix');
      assert.equal(redact('a sixsix b sixsixsix'), 'a *** b ***six');
    });
    it('ignores secrets shorter than six characters, empty or missing (they would mask ordinary words)', () => {
      const before = secretCount();
      for (const secret of ['five5', '', null, undefined]) addSecret(secret);
      addSecret('abcde', { shortLived: true });
      assert.equal(secretCount(), before);
      assert.equal(redact('five5 abcde stays readable'), 'five5 abcde stays readable');
    });
    it('keeps an API key registered again as short-lived only once', () => {
      const key = 'sk-edges-kept-key-42';
      addSecret(key);
      const before = secretCount();
      addSecret(key, { shortLived: true });
      assert.equal(secretCount(), before);
      assert.equal(redact(`key=${key}`), 'key=***');
    });
    it('masks a short-lived RTC token', () => {
      addSecret('007rtc-edges-token', { shortLived: true });
      assert.equal(redact('joining with 007rtc-edges-token now'), 'joining with *** now');
    });
  });
});

describe('redactData', () => {
  it('is empty without data', () => {
    assert.equal(redactData(undefined), '');
  });
  it('serialises the data and masks secrets in it', () => {
    addSecret('rtc-data-token-77', { shortLived: true });
    assert.equal(redactData({ liveId: 'L1', token: 'x', note: 'with rtc-data-token-77' }), '{"liveId":"L1","token":"***","note":"with ***"}');
  });
  it('says so when the data cannot be serialised', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    assert.equal(redactData(circular), '[unserialisable]');
  });
});

describe('createLogger', () => {
  it('writes "<ISO time> <LEVEL> [scope] message data" for each level at or above debug', () => {
    const { logger, lines } = capture({ level: 'debug', scope: 'cli' });
    logger.debug('one');
    logger.info('two', { n: 2 });
    logger.warn('three');
    logger.error('four', { ok: false });
    assert.deepEqual(lines(), ['DEBUG [cli] one', 'INFO [cli] two {"n":2}', 'WARN [cli] three', 'ERROR [cli] four {"ok":false}']);
  });

  it('logs info and above by default, without a scope', () => {
    const { logger, lines } = capture();
    logger.debug('hidden');
    logger.info('shown');
    logger.error('also shown');
    assert.deepEqual(lines(), ['INFO shown', 'ERROR also shown']);
  });

  it('at warn, drops debug and info and keeps warn and error', () => {
    const { logger, lines } = capture({ level: 'warn' });
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    assert.deepEqual(lines(), ['WARN w', 'ERROR e']);
  });

  it('at error, keeps error only', () => {
    const { logger, lines } = capture({ level: 'error' });
    logger.warn('w');
    logger.error('e');
    assert.deepEqual(lines(), ['ERROR e']);
  });

  it('never writes the API key or an RTC token, in the message or in the data', () => {
    const key = 'sk-logger-edges-APIKEY-9';
    const token = 'rtc-logger-edges-token-9';
    addSecret(key);
    addSecret(token, { shortLived: true });
    const { logger, lines } = capture({ scope: 'main' });
    logger.info(`create with Authorization: Token ${key}`, { token, rtc: { app_id: 'a1', note: `t=${token}` } });
    logger.warn(`socket wss://h.test/ws?k=${key} failed`);
    assert.deepEqual(lines(), [
      'INFO [main] create with Authorization: Token *** {"token":"***","rtc":{"app_id":"a1","note":"t=***"}}',
      'WARN [main] socket wss://h.test/ws?k=*** failed',
    ]);
  });

  it('writes to stderr, one line each, when no sink is given', () => {
    const written: string[] = [];
    const original = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      createLogger({ scope: 'edge' }).info('to stderr');
    } finally {
      process.stderr.write = original;
    }
    assert.equal(written.length, 1);
    assert.match(written[0]!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z INFO \[edge\] to stderr\n$/);
  });
});

describe('logLevelFromEnv', () => {
  it('is debug for KIOSK_LOG_LEVEL=debug (an env file\'s stray space ignored), info for anything else', () => {
    assert.equal(logLevelFromEnv({ KIOSK_LOG_LEVEL: 'debug' }), 'debug');
    assert.equal(logLevelFromEnv({ KIOSK_LOG_LEVEL: ' debug\n' }), 'debug');
    for (const value of [undefined, '', 'info', 'DEBUG', 'verbose']) assert.equal(logLevelFromEnv({ KIOSK_LOG_LEVEL: value }), 'info', String(value));
  });
});
