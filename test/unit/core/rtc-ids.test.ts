/**
 * RTC identities (spec §2.5) and the emulator's RTC token format: the exact uids derived from our own,
 * the exact token the emulator issues for a join/freeze/quality, and how each part is read back.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { avatarUidFor, demoFreezeAfterMs, demoJoinDelayMs, demoQuality, emulatorRtcToken, isEmulatorCredentials, rtcIds } from '../../../electron/core/rtc-ids.ts';

describe('rtcIds and avatarUidFor (spec §2.5)', () => {
  it('names the uids and channels of a session', () => {
    assert.deepEqual(
      [rtcIds.user('c1', 'l2'), rtcIds.bot('c1', 'l2'), rtcIds.videoPush('c1', 'l2'), rtcIds.audioChannel('l2'), rtcIds.videoChannel('l2')],
      ['live-user-c1-l2', 'live-bot-c1-l2', 'live-video-push-c1-l2', 'live-audio-l2', 'live-user-l2'],
    );
    assert.equal(rtcIds.user('c', 'l'), 'live-user-c-l');
    assert.equal(rtcIds.bot('c', 'l'), 'live-bot-c-l');
    assert.equal(rtcIds.videoPush('c', 'l'), 'live-video-push-c-l');
    assert.equal(rtcIds.audioChannel('l'), 'live-audio-l');
    assert.equal(rtcIds.videoChannel('l'), 'live-user-l');
  });

  it('derives the avatar uids from our own: in video mode video from live-video-push and audio from video-push and bot, in audio mode audio from live-bot and no video', () => {
    assert.deepEqual(avatarUidFor('live-user-c1-l2', 'video'), { video: 'live-video-push-c1-l2', audio: ['live-video-push-c1-l2', 'live-bot-c1-l2'] });
    assert.deepEqual(avatarUidFor('live-user-c1-l2', 'audio'), { video: null, audio: ['live-bot-c1-l2'] });
    assert.deepEqual(avatarUidFor('live-user-creator7-live42', 'video'), {
      video: 'live-video-push-creator7-live42',
      audio: ['live-video-push-creator7-live42', 'live-bot-creator7-live42'],
    });
    assert.deepEqual(avatarUidFor('live-user-creator7-live42', 'audio'), { video: null, audio: ['live-bot-creator7-live42'] });
  });

  it('derives nothing from a user_id off the pattern live-user-<creator>-<live>, including one with a line break after the prefix', () => {
    assert.deepEqual(avatarUidFor('someone-else', 'video'), { video: null, audio: [] });
    assert.deepEqual(avatarUidFor('live-user-c1\nl2', 'audio'), { video: null, audio: [] });
    assert.deepEqual(avatarUidFor('12345', 'video'), { video: null, audio: [] });
    assert.deepEqual(avatarUidFor('live-user-', 'audio'), { video: null, audio: [] });
    assert.deepEqual(avatarUidFor('xlive-user-a-b', 'video'), { video: null, audio: [] });
  });

  it('recognises emulator credentials by their app id prefix "emulator-" only, case and all', () => {
    assert.equal(isEmulatorCredentials({ app_id: 'emulator-app' }), true);
    assert.equal(isEmulatorCredentials({ app_id: 'app-emulator-' }), false);
    assert.equal(isEmulatorCredentials({ app_id: 'emulator-abc' }), true);
    assert.equal(isEmulatorCredentials({ app_id: 'a1b2c3' }), false);
    assert.equal(isEmulatorCredentials({ app_id: 'my-emulator-abc' }), false);
    assert.equal(isEmulatorCredentials({ app_id: 'Emulator-abc' }), false);
  });
});

describe('emulator RTC tokens', () => {
  it('builds a plain token from the join delay, rounded and never negative', () => {
    assert.equal(emulatorRtcToken(400, 'abc'), 'emu-rtc-j400-abc');
    assert.equal(emulatorRtcToken(399.6, 'abc'), 'emu-rtc-j400-abc');
    assert.equal(emulatorRtcToken(-5, 'abc'), 'emu-rtc-j0-abc');
  });

  it('adds the freeze (rounded, never negative) and the poor-quality mark', () => {
    assert.equal(emulatorRtcToken(400, 'abc', 1_500), 'emu-rtc-j400f1500-abc');
    assert.equal(emulatorRtcToken(400, 'abc', 0), 'emu-rtc-j400f0-abc');
    assert.equal(emulatorRtcToken(400, 'abc', -20.4), 'emu-rtc-j400f0-abc');
    assert.equal(emulatorRtcToken(400, 'abc', null, 'poor'), 'emu-rtc-j400-qpoor-abc');
    assert.equal(emulatorRtcToken(400, 'abc', 1_500, 'poor'), 'emu-rtc-j400f1500-qpoor-abc');
    assert.equal(emulatorRtcToken(400, 'abc', null, 'good'), 'emu-rtc-j400-abc');
  });

  it('reads the modelled quality back', () => {
    assert.equal(demoQuality('emu-rtc-j400-qpoor-abc'), 'poor');
    assert.equal(demoQuality('emu-rtc-j400f1500-qpoor-abc'), 'poor');
    assert.equal(demoQuality('emu-rtc-j400-abc'), 'good');
    assert.equal(demoQuality('x-emu-rtc-j400-qpoor-abc'), 'good', 'only at the start');
    assert.equal(demoQuality('emu-rtc-jx-qpoor-abc'), 'good', 'the join must be digits');
    assert.equal(demoQuality('emu-rtc-j400fx-qpoor-abc'), 'good', 'the freeze must be digits');
  });

  it('reads the join delay and the freeze back, and nothing from other tokens', () => {
    assert.deepEqual([demoJoinDelayMs('emu-rtc-j400-abc'), demoFreezeAfterMs('emu-rtc-j400-abc')], [400, null]);
    assert.deepEqual([demoJoinDelayMs('emu-rtc-j400f1500-abc'), demoFreezeAfterMs('emu-rtc-j400f1500-abc')], [400, 1_500]);
    assert.deepEqual([demoJoinDelayMs('emu-rtc-j0f0-abc'), demoFreezeAfterMs('emu-rtc-j0f0-abc')], [0, 0]);
    assert.deepEqual([demoJoinDelayMs('real-agora-token'), demoFreezeAfterMs('real-agora-token')], [0, null]);
    assert.deepEqual([demoJoinDelayMs('x-emu-rtc-j400-abc'), demoFreezeAfterMs('x-emu-rtc-j400f9-abc')], [0, null], 'only at the start');
    assert.deepEqual([demoJoinDelayMs('emu-rtc-jx-abc'), demoFreezeAfterMs('emu-rtc-j400fx-abc')], [0, null], 'digits only');
  });

  it('round-trips every part through a token', () => {
    const token = emulatorRtcToken(123_456, 'r', 1_234_567, 'poor');
    assert.deepEqual([demoJoinDelayMs(token), demoFreezeAfterMs(token), demoQuality(token)], [123_456, 1_234_567, 'poor']);
  });
});
