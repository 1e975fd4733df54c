/**
 * IdleWatch (renderer/src/call/IdleWatch.svelte.ts), the idle / abandonment hang-up, on a fake clock
 * with scripted voice and presence signals. The rune module is compiled by the Svelte compiler exactly
 * as the renderer build does (test/helpers/svelte-runes.ts).
 */
/// <reference types="svelte" />
import '../../helpers/svelte-runes.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import type { Signal } from '../../../renderer/src/sensing/types.ts';

const { IdleWatch } = await import('../../../renderer/src/call/IdleWatch.svelte.ts');

class FakeSignal implements Signal {
  value: boolean | null = null;
  readonly listeners = new Set<(v: boolean | null) => void>();
  onChange(listener: (v: boolean | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  set(value: boolean | null): void {
    if (value === this.value) return;
    this.value = value;
    for (const l of [...this.listeners]) l(value);
  }
}

function setup(settings = { promptSeconds: 45, hangupSeconds: 15 }, mode: 'audio' | 'video' = 'audio') {
  const clock = new FakeClock(0);
  const voice = new FakeSignal();
  const presence = new FakeSignal();
  const expired: number[] = [];
  const watch = new IdleWatch({ clock, onExpire: () => expired.push(clock.now()) });
  /** Phase and countdown after each step, to assert whole sequences. */
  const look = () => `${watch.phase}${watch.promptLeftS === null ? '' : `:${watch.promptLeftS}`}`;
  const start = (withPresence = false) => watch.start({ settings, mode, voice, presence: withPresence ? presence : null });
  return { clock, voice, presence, expired, watch, look, start };
}

describe('IdleWatch', () => {
  describe('in a silent call', () => {
    it('prompts after promptSeconds, counts down once a second, and hangs up hangupSeconds later, once', async () => {
      const { clock, expired, watch, look, start } = setup();
      start();
      const seen: string[] = [look()];
      await clock.advance(44_999);
      seen.push(look());
      await clock.advance(1);
      seen.push(look());
      for (let i = 0; i < 15; i++) {
        await clock.advance(1_000);
        seen.push(look());
      }
      assert.deepEqual(seen, ['watching', 'watching', 'prompting:15', 'prompting:14', 'prompting:13', 'prompting:12', 'prompting:11', 'prompting:10', 'prompting:9', 'prompting:8', 'prompting:7', 'prompting:6', 'prompting:5', 'prompting:4', 'prompting:3', 'prompting:2', 'prompting:1', 'expired']);
      assert.deepEqual(expired, [60_000]);
      assert.equal(watch.endedCall, true);
      assert.equal(clock.pendingCount, 0, 'nothing left scheduled after expiry');
      await clock.advance(120_000);
      assert.deepEqual(expired, [60_000], 'expires only once');
    });

    it('treats an unknown voice signal (microphone not measured yet) as silence', async () => {
      const { clock, expired, watch } = setup({ promptSeconds: 2, hangupSeconds: 1 });
      watch.start({ settings: { promptSeconds: 2, hangupSeconds: 1 }, mode: 'audio', voice: null });
      await clock.advance(3_000);
      assert.deepEqual(expired, [3_000]);
    });
  });

  describe('when the visitor speaks', () => {
    it('never prompts while speech lasts, and waits the whole promptSeconds after it stops', async () => {
      const { clock, voice, expired, watch, look, start } = setup();
      start();
      await clock.advance(30_000);
      assert.equal(watch.someoneActive, false);
      voice.set(true);
      assert.equal(watch.someoneActive, true);
      await clock.advance(120_000);
      assert.equal(look(), 'watching');
      voice.set(false); // at 150 s
      await clock.advance(44_000);
      assert.equal(look(), 'watching');
      await clock.advance(1_000);
      assert.equal(look(), 'prompting:15');
      assert.deepEqual(expired, []);
    });

    it('cancels a running prompt', async () => {
      const { clock, voice, expired, watch, look, start } = setup();
      start();
      await clock.advance(50_000);
      assert.equal(look(), 'prompting:10');
      voice.set(true);
      assert.equal(look(), 'watching');
      voice.set(false);
      await clock.advance(44_000);
      assert.equal(look(), 'watching');
      await clock.advance(1_000);
      assert.equal(look(), 'prompting:15', 'a fresh countdown: the first one did not go on in the background');
      assert.deepEqual(expired, []);
      assert.equal(watch.isPrompting, true);
    });
  });

  describe('a touch', () => {
    it('cancels the prompt and restarts the whole wait', async () => {
      const { clock, expired, watch, look, start } = setup();
      start();
      await clock.advance(55_000);
      assert.equal(look(), 'prompting:5');
      watch.touch();
      assert.equal(look(), 'watching');
      await clock.advance(44_999);
      assert.equal(look(), 'watching');
      await clock.advance(1);
      assert.equal(look(), 'prompting:15');
      assert.deepEqual(expired, []);
    });

    it('does nothing when the watch is off', async () => {
      const { clock, watch, expired } = setup();
      watch.touch();
      await clock.advance(100_000);
      assert.equal(watch.phase, 'off');
      assert.deepEqual(expired, []);
      assert.equal(clock.pendingCount, 0);
    });
  });

  describe('presence', () => {
    it('counts in video mode: someone in front of the camera keeps the call going', async () => {
      const { clock, presence, expired, look, start } = setup({ promptSeconds: 45, hangupSeconds: 15 }, 'video');
      start(true);
      presence.set(true);
      await clock.advance(300_000);
      assert.equal(look(), 'watching');
      presence.set(false);
      await clock.advance(45_000);
      assert.equal(look(), 'prompting:15');
      presence.set(true);
      assert.equal(look(), 'watching');
      assert.deepEqual(expired, []);
    });

    it('does not count in audio mode: voice activity alone decides', async () => {
      const { clock, presence, expired, start } = setup({ promptSeconds: 45, hangupSeconds: 15 }, 'audio');
      start(true);
      presence.set(true);
      await clock.advance(60_000);
      assert.deepEqual(expired, [60_000]);
    });
  });

  describe('stop, reset and restart', () => {
    it('stop() clears every timer and subscription but remembers that the call ended by idleness until reset()', async () => {
      const { clock, voice, presence, watch, start } = setup({ promptSeconds: 1, hangupSeconds: 1 }, 'video');
      start(true);
      await clock.advance(2_000);
      assert.equal(watch.endedCall, true);
      watch.stop();
      assert.equal(watch.phase, 'off');
      assert.equal(clock.pendingCount, 0);
      assert.equal(voice.listeners.size, 0);
      assert.equal(presence.listeners.size, 0);
      assert.equal(watch.endedCall, true);
      watch.reset();
      assert.equal(watch.endedCall, false);
    });

    it('stopping mid-prompt leaves nothing that could hang up a later call', async () => {
      const { clock, watch, expired, start } = setup();
      start();
      await clock.advance(50_000);
      watch.stop();
      assert.equal(clock.pendingCount, 0);
      await clock.advance(100_000);
      assert.deepEqual(expired, []);
    });

    it('attaching the voice signal late does not restart a wait already running', async () => {
      const { clock, voice, watch, look } = setup();
      watch.start({ settings: { promptSeconds: 45, hangupSeconds: 15 }, mode: 'audio', voice: null });
      await clock.advance(40_000);
      voice.set(false);
      watch.attachVoice(voice);
      await clock.advance(5_000);
      assert.equal(look(), 'prompting:15');
    });

    it('refuses zero or negative waits from a bad config (falls back to 45 s / 15 s)', async () => {
      const { clock, watch, expired } = setup();
      watch.start({ settings: { promptSeconds: 0, hangupSeconds: -3 }, mode: 'audio' });
      await clock.advance(59_999);
      assert.deepEqual(expired, []);
      await clock.advance(1);
      assert.deepEqual(expired, [60_000]);
    });
  });
});
