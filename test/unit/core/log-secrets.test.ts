/**
 * Redaction over a kiosk's lifetime (found while reading the soak's heap figures): every session registers
 * its RTC token as a secret, and every log line is scanned for every secret. The set of tokens is bounded,
 * so weeks of sessions neither grow memory nor slow logging, while API keys and recent tokens stay masked.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SHORT_LIVED_SECRETS, addSecret, redact, secretCount } from '../../../electron/core/log.ts';

describe('log redaction over many sessions', () => {
  it('keeps at most MAX_SHORT_LIVED_SECRETS tokens, masks the newest ones and every API key', () => {
    const apiKey = 'sk-log-secrets-APIKEY-000111';
    addSecret(apiKey);
    const before = secretCount();
    const tokens = Array.from({ length: 10_000 }, (_, i) => `rtc-token-${String(i).padStart(6, '0')}-abcdef`);
    for (const token of tokens) addSecret(token, { shortLived: true });

    // Bounded: 10,000 sessions add at most MAX_SHORT_LIVED_SECRETS entries.
    assert.equal(secretCount() - before, MAX_SHORT_LIVED_SECRETS);
    // The newest tokens (any that can still be valid) and the key are masked.
    for (const token of tokens.slice(-MAX_SHORT_LIVED_SECRETS)) assert.equal(redact(`joined with ${token}.`), 'joined with ***.');
    assert.equal(redact(`key ${apiKey} and token ${tokens.at(-1)}`), 'key *** and token ***');
    // An API key is never evicted by tokens, even one registered as short-lived by mistake.
    addSecret(apiKey, { shortLived: true });
    for (let i = 0; i < 2 * MAX_SHORT_LIVED_SECRETS; i++) addSecret(`later-token-${i}-xyz`, { shortLived: true });
    assert.equal(redact(`key ${apiKey}`), 'key ***');
  });

  it('re-adding a token makes it the newest (it is not evicted before tokens issued after it)', () => {
    const first = 'rtc-renewed-token-0001';
    addSecret(first, { shortLived: true });
    for (let i = 0; i < MAX_SHORT_LIVED_SECRETS - 1; i++) addSecret(`filler-a-${i}-token`, { shortLived: true });
    addSecret(first, { shortLived: true });
    for (let i = 0; i < MAX_SHORT_LIVED_SECRETS - 1; i++) addSecret(`filler-b-${i}-token`, { shortLived: true });
    assert.equal(redact(first), '***');
  });
});
