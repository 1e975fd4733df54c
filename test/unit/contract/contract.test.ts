import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ARG_SCHEMAS, CHANNELS, IPC_PREFIX, isKnownChannel, parseArgs, type Channel } from '../../../electron/contract.ts';

const NO_ARGS = { valid: [undefined, {}], invalid: [null, true, { verbose: true }] };
const PIN_ARGS = { valid: [{ pin: '1234' }, { pin: '12345678' }], invalid: [undefined, {}, { pin: '123' }, { pin: '123456789' }, { pin: '12a4' }, { pin: 1234 }] };
/** A new PIN needs 6 digits; typing an older 4-digit one to unlock still works (PIN_ARGS). */
const NEW_PIN_ARGS = { valid: [{ pin: '123456' }, { pin: '12345678' }], invalid: [undefined, {}, { pin: '1234' }, { pin: '12345' }, { pin: '123456789' }, { pin: '12a456' }, { pin: 123456 }] };
const SETTINGS = {
  service: { surface: 'direct' },
  callMode: 'video',
  allowModeChoice: true,
  avatar: { imagePath: 'resources/demo-avatar.png', name: 'Ava', voice: 'Tina' },
  window: { mode: 'kiosk', width: 1080, height: 1920 },
  rtcEngine: 'auto',
  returnToAttractSeconds: 15,
  countdownWarningSeconds: 30,
  idle: { promptSeconds: 45, hangupSeconds: 15 },
};

/** Per channel: arguments that must pass, and ones that must be rejected with invalid_request. */
const CASES: Record<Channel, { valid: unknown[]; invalid: unknown[] }> = {
  [CHANNELS.sessionStart]: {
    valid: [{}, { callMode: 'audio' }, { callMode: 'video' }, { avatarId: 'kim' }, { callMode: 'audio', avatarId: 'x'.repeat(64) }, { language: 'ar' }, { callMode: 'video', language: 'zh-Hans' }],
    invalid: [
      undefined, null, 'video', { callMode: 'hologram' }, { callMode: 1 }, { callMode: 'audio', extra: true }, [],
      { avatarId: '' }, { avatarId: 'x'.repeat(65) }, { avatarId: 7 }, { avatarId: null },
      { language: 'xx' }, { language: 'zh' }, { language: '' }, { language: null },
    ],
  },
  [CHANNELS.sessionHangup]: {
    valid: [undefined, {}, { cause: 'visitor' }, { cause: 'idle' }, { cause: 'media_stalled' }],
    invalid: [null, 1, 'now', { reason: 'user_end' }, [], { cause: 'boredom' }],
  },
  [CHANNELS.sessionGetState]: {
    valid: [undefined, {}],
    invalid: [null, true, { verbose: true }],
  },
  [CHANNELS.sessionSetMuted]: {
    valid: [{ muted: true }, { muted: false }],
    invalid: [undefined, {}, { muted: 'yes' }, { muted: 1 }, { muted: true, extra: 1 }, true],
  },
  [CHANNELS.sessionAgeGateAsk]: {
    valid: [undefined, {}],
    invalid: [null, true, { age: 18 }],
  },
  [CHANNELS.sessionAgeGateAnswer]: {
    valid: [{ confirmed: true }, { confirmed: false }],
    invalid: [undefined, {}, null, { confirmed: 'yes' }, { confirmed: 1 }, { confirmed: true, age: 18 }, true],
  },
  [CHANNELS.sessionAgeGateStaffUnlock]: {
    valid: [undefined, {}],
    invalid: [null, true, { pin: '123456' }],
  },
  [CHANNELS.sessionRtcReady]: {
    valid: [{ liveId: 'live-1' }, { liveId: 'x'.repeat(200) }],
    invalid: [undefined, {}, null, 'live-1', { liveId: '' }, { liveId: 'x'.repeat(201) }, { liveId: 7 }, { liveId: 'a', extra: 1 }],
  },
  [CHANNELS.sessionReportQuality]: {
    valid: [
      { liveId: 'live-1', bitrateKbps: 950, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: 0, packetLossPct: 0, frameRate: 0, rttMs: 0, level: 'unknown', final: true },
      { liveId: 'live-1', bitrateKbps: 100_000, packetLossPct: 100, frameRate: 240, rttMs: 60_000, level: 'down' },
    ],
    invalid: [
      undefined, {}, null,
      { bitrateKbps: 950, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good' }, // no live id
      { liveId: 'live-1', bitrateKbps: -1, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: 100_001, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: 950, packetLossPct: 101, frameRate: 25, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: 950, packetLossPct: -0.1, frameRate: 25, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: 950, packetLossPct: 0.4, frameRate: 241, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: 950, packetLossPct: 0.4, frameRate: 25, rttMs: 60_001, level: 'good' },
      { liveId: 'live-1', bitrateKbps: Number.NaN, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: Number.POSITIVE_INFINITY, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: '950', packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good' },
      { liveId: 'live-1', bitrateKbps: 950, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'terrible' },
      { liveId: 'live-1', bitrateKbps: 950, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good', extra: 1 },
      { liveId: '', bitrateKbps: 950, packetLossPct: 0.4, frameRate: 25, rttMs: 48, level: 'good' },
    ],
  },
  [CHANNELS.sessionReportMilestone]: {
    valid: [
      { liveId: 'live-1', milestone: 'joined', durationMs: 420 },
      { liveId: 'live-1', milestone: 'avatar_published' },
      { liveId: 'live-1', milestone: 'first_frame' },
      { liveId: 'live-1', milestone: 'first_audio' },
    ],
    invalid: [
      undefined, {}, null, { milestone: 'first_frame' }, { liveId: 'live-1', milestone: 'first_kiss' },
      { liveId: 'live-1', milestone: 'joined', durationMs: -1 }, { liveId: 'live-1', milestone: 'joined', durationMs: 600_001 },
      { liveId: 'live-1', milestone: 'joined', durationMs: Number.NaN }, { liveId: 'live-1', milestone: 'first_frame', extra: 1 },
    ],
  },
  [CHANNELS.sessionReportMediaError]: {
    valid: [
      { kind: 'microphone_denied', message: 'NotAllowedError' },
      { kind: 'rtc_join_failed', message: '' },
      { kind: 'other', message: 'x'.repeat(500) },
    ],
    invalid: [
      undefined,
      { kind: 'microphone_denied' },
      { kind: 'cosmic_rays', message: 'x' },
      { kind: 'other', message: 'x'.repeat(501) },
      { kind: 'other', message: 42 },
      { kind: 'other', message: 'x', stack: 'at …' },
    ],
  },
  [CHANNELS.configGet]: {
    valid: [undefined, {}],
    invalid: [null, 'all', { includeKey: true }],
  },
    [CHANNELS.staffPinState]: NO_ARGS,
  [CHANNELS.staffSetPin]: NEW_PIN_ARGS,
  [CHANNELS.staffUnlock]: PIN_ARGS,
  [CHANNELS.staffLock]: NO_ARGS,
  [CHANNELS.staffStatus]: NO_ARGS,
  [CHANNELS.staffGetSettings]: NO_ARGS,
  [CHANNELS.staffSaveSettings]: {
    valid: [{ settings: SETTINGS }, { settings: { ...SETTINGS, maxCallSeconds: 300, moderation: 'strict', extraMotion: false } }],
    invalid: [undefined, {}, { settings: { ...SETTINGS, encryptedApiKey: 'QUJD' } }, { settings: { ...SETTINGS, callMode: 'hologram' } }, { settings: { ...SETTINGS, idle: { promptSeconds: '45', hangupSeconds: 15 } } }],
  },
  [CHANNELS.staffSetApiKey]: {
    valid: [{ apiKey: null }, { apiKey: 'sk-12345678' }, { apiKey: '  sk-12345678  ' }],
    invalid: [undefined, {}, { apiKey: 'short' }, { apiKey: 12345678 }, { apiKey: 'x'.repeat(513) }, { apiKey: null, persist: true }],
  },
  [CHANNELS.staffListVoices]: NO_ARGS,
  [CHANNELS.staffCloneVoice]: {
    valid: [{ audioUrl: 'https://example.com/a.mp3', voice: 'Maya' }, { audioUrl: 'https://example.com/a.mp3', voice: 'Maya', language: 'en' }],
    invalid: [undefined, {}, { audioUrl: '', voice: 'Maya' }, { audioUrl: 'https://example.com/a.mp3', voice: 'x'.repeat(65) }, { audioUrl: 'u', voice: 'v', extra: 1 }],
  },
  [CHANNELS.staffRunDoctor]: NO_ARGS,
  [CHANNELS.staffWireReport]: NO_ARGS,
  [CHANNELS.staffNetworkCheckStart]: NO_ARGS,
  [CHANNELS.staffNetworkCheckFinish]: {
    valid: [
      { checkId: 'live-1', outcome: { ok: true, joinMs: 412, state: 'connected', proxy: 'off', message: 'Joined.' } },
      { checkId: 'live-1', outcome: { ok: false, joinMs: null, state: 'timeout', proxy: 'tcp', message: '' } },
    ],
    invalid: [
      undefined, {}, { checkId: 'live-1' },
      { checkId: '', outcome: { ok: true, joinMs: 412, state: 'connected', proxy: 'off', message: '' } },
      { checkId: 'live-1', outcome: { ok: true, joinMs: -1, state: 'connected', proxy: 'off', message: '' } },
      { checkId: 'live-1', outcome: { ok: true, joinMs: 120_001, state: 'connected', proxy: 'off', message: '' } },
      { checkId: 'live-1', outcome: { ok: true, joinMs: 412, state: 'CONNECTED', proxy: 'off', message: '' } },
      { checkId: 'live-1', outcome: { ok: true, joinMs: 412, state: 'connected', proxy: 'http', message: '' } },
      { checkId: 'live-1', outcome: { ok: true, joinMs: 412, state: 'connected', proxy: 'off', message: 'x'.repeat(501) } },
      { checkId: 'live-1', outcome: { ok: true, joinMs: 412, state: 'connected', proxy: 'off', message: '', extra: 1 } },
    ],
  },
  [CHANNELS.staffLedgerTotals]: NO_ARGS,
  [CHANNELS.staffLedgerCsv]: {
    valid: [{}, { since: '2026-11-01' }],
    invalid: [undefined, { since: 'yesterday' }, { since: '2026-11-01', format: 'xlsx' }],
  },
  [CHANNELS.staffVisitors]: NO_ARGS,
  [CHANNELS.staffLogTail]: NO_ARGS,
  [CHANNELS.staffSetAvatarVolume]: {
    valid: [{ percent: 0 }, { percent: 40 }, { percent: 100 }],
    invalid: [undefined, {}, { percent: -1 }, { percent: 101 }, { percent: 40.5 }, { percent: '40' }, { percent: null }, { percent: 40, extra: true }],
  },
  [CHANNELS.staffSetOpenAtLogin]: {
    valid: [{ enabled: true }, { enabled: false }],
    invalid: [undefined, {}, { enabled: 'yes' }],
  },
  [CHANNELS.staffExitKiosk]: NO_ARGS,
  [CHANNELS.staffRestart]: NO_ARGS,
  [CHANNELS.appReportError]: {
    valid: [{ message: 'boom' }, { message: 'boom', stack: 'at x', source: 'window.onerror' }],
    invalid: [undefined, {}, { message: 'x'.repeat(2001) }, { message: 'boom', level: 'fatal' }],
  },
  [CHANNELS.attractReport]: {
    valid: [{ showing: true, present: null }, { showing: true, present: true }, { showing: false, present: false }],
    invalid: [undefined, {}, { showing: true }, { showing: 'yes', present: null }, { showing: true, present: 1 }, { showing: true, present: null, frame: 'x' }],
  },
  [CHANNELS.attractVisitorStep]: {
    valid: [{ step: 'noticed' }, { step: 'approached' }, { step: 'greeted' }],
    // Only the step's name: no time, count, image or anything else may ride along.
    invalid: [undefined, {}, 'noticed', { step: 'tapped' }, { step: 'noticed', atMs: 1 }, { step: 'noticed', count: 5 }, { step: 'noticed', face: 'x' }, { step: null }],
  },
};

describe('IPC contract', () => {
  it('every channel has a schema, a test case and the kiosk: prefix', () => {
    const channels = Object.values(CHANNELS);
    assert.deepEqual(Object.keys(ARG_SCHEMAS).sort(), [...channels].sort());
    assert.deepEqual(Object.keys(CASES).sort(), [...channels].sort());
    for (const c of channels) assert.ok(c.startsWith(IPC_PREFIX), c);
  });

  it('isKnownChannel accepts only contract channels', () => {
    for (const c of Object.values(CHANNELS)) assert.equal(isKnownChannel(c), true);
    for (const c of ['kiosk:config:set-api-key', 'kiosk:session', 'kiosk:event', 'ipc:anything', '', 'KIOSK:SESSION:START', '__proto__', 'constructor']) {
      assert.equal(isKnownChannel(c), false, c);
    }
  });

  for (const [channel, { valid, invalid }] of Object.entries(CASES) as [Channel, (typeof CASES)[Channel]][]) {
    describe(channel, () => {
      for (const arg of valid) {
        it(`accepts ${JSON.stringify(arg) ?? 'undefined'}`, () => {
          const r = parseArgs(channel, arg);
          assert.equal(r.ok, true, JSON.stringify(r));
        });
      }
      for (const arg of invalid) {
        it(`rejects ${(JSON.stringify(arg) ?? 'undefined').slice(0, 60)} with invalid_request`, () => {
          const r = parseArgs(channel, arg);
          assert.equal(r.ok, false);
          if (!r.ok) {
            assert.equal(r.error.code, 'invalid_request');
            assert.match(r.error.message, new RegExp(channel));
          }
        });
      }
    });
  }

  it('trims the API key before use', () => {
    const r = parseArgs(CHANNELS.staffSetApiKey, { apiKey: '  sk-12345678  ' });
    assert.deepEqual(r, { ok: true, value: { apiKey: 'sk-12345678' } });
  });

  it('an invalid API key is never echoed in the error message', () => {
    const r = parseArgs(CHANNELS.staffSetApiKey, { apiKey: 'sk-1' });
    assert.equal(r.ok, false);
    assert.doesNotMatch(JSON.stringify(r), /sk-1/);
  });
});
