/**
 * LiveCall (renderer/src/call/LiveCall.svelte.ts), the RTC side of one call, with scripted engines: a
 * spare's channel joined ahead of the tap is watched until the tap; one that loses its connection is
 * dropped and joined again, and the tap never lands on it; the avatar volume reaches each call's engine before
 * it joins, and a change reaches the running one. Compiled by the Svelte compiler as the build does.
 */
/// <reference types="svelte" />
import '../../helpers/svelte-runes.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicConfig } from '../../../electron/contract.ts';
import { Emitter, type EngineEvent, type RemoteMediaProgress, type RtcEngine } from '../../../renderer/src/rtc/engine.ts';
import { VIDEO_CREDS, fakeView } from '../../helpers/rtc-fixtures.ts';

const { LiveCall, MAX_PREJOIN_REPLACEMENTS } = await import('../../../renderer/src/call/LiveCall.svelte.ts');

const CONFIG = { rtcEngine: 'auto', mode: 'direct' } as unknown as PublicConfig;
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class ScriptedEngine implements RtcEngine {
  readonly kind = 'agora-web' as const;
  readonly events = new Emitter<EngineEvent>();
  readonly log: string[] = [];
  constructor(readonly n: number) {}
  onEvent(listener: (event: EngineEvent) => void): () => void {
    return this.events.on(listener);
  }
  async prejoin(): Promise<void> {
    this.log.push('prejoin');
  }
  async join(): Promise<void> {
    this.log.push('join');
    this.events.emit({ type: 'ready' });
  }
  async setMuted(): Promise<void> {}
  /** The avatar volumes it was given, and whether before its join or in the call. */
  readonly volumes: string[] = [];
  setAvatarVolume(percent: number): void {
    this.volumes.push(`${percent} ${this.log.includes('join') ? 'in the call' : 'before joining'}`);
  }
  resumePlayback(): void {}
  remoteMediaProgress(): RemoteMediaProgress | null {
    return null;
  }
  async resubscribeRemote(): Promise<void> {}
  async leave(): Promise<void> {
    this.log.push('leave');
  }
}

function setup() {
  const engines: ScriptedEngine[] = [];
  const failures: string[] = [];
  const call = new LiveCall({
    getUserMedia: () => Promise.reject(new Error('no devices here')),
    onFailure: (e) => failures.push(e.kind),
    onWarning: () => {},
    makeEngine: () => {
      const engine = new ScriptedEngine(engines.length);
      engines.push(engine);
      return engine;
    },
  });
  call.attachView(fakeView());
  return { call, engines, failures };
}

describe('LiveCall: a spare\'s channel joined ahead of the tap', () => {
  it('a pre-join that loses its connection is dropped and joined again; the tap lands on the new one', async () => {
    const { call, engines, failures } = setup();
    call.preJoin('L42', VIDEO_CREDS, 'video', CONFIG);
    await tick();
    assert.equal(engines.length, 1);
    engines[0]!.events.emit({ type: 'prejoin-lost', reason: 'DISCONNECTED (NETWORK_ERROR)' });
    for (let i = 0; i < 5; i++) await tick();
    assert.deepEqual(engines[0]!.log, ['prejoin', 'leave'], 'the lost one left its channel');
    assert.equal(engines.length, 2, 'a replacement was joined');
    assert.deepEqual(engines[1]!.log, ['prejoin']);
    assert.equal(call.preJoinedLiveId, 'L42');

    await call.begin('L42', VIDEO_CREDS, 'video', CONFIG);
    assert.deepEqual(engines[1]!.log, ['prejoin', 'join'], 'the tap used the healthy replacement');
    assert.deepEqual(engines[0]!.log, ['prejoin', 'leave'], 'never the lost one');
    assert.deepEqual(failures, []);
  });

  it('a spare that keeps losing its connection is replaced a bounded number of times, then the tap joins afresh', async () => {
    const { call, engines } = setup();
    call.preJoin('L42', VIDEO_CREDS, 'video', CONFIG);
    for (let round = 0; round <= MAX_PREJOIN_REPLACEMENTS; round++) {
      await tick();
      engines.at(-1)!.events.emit({ type: 'prejoin-lost', reason: 'RECONNECTING' });
      for (let i = 0; i < 5; i++) await tick();
    }
    assert.equal(engines.length, 1 + MAX_PREJOIN_REPLACEMENTS);
    assert.equal(call.preJoinedLiveId, null, 'nothing pre-joined any more');
    await call.begin('L42', VIDEO_CREDS, 'video', CONFIG);
    assert.equal(engines.length, 2 + MAX_PREJOIN_REPLACEMENTS, 'the tap made a fresh engine');
    assert.deepEqual(engines.at(-1)!.log, ['join']);
  });

  it('after the tap, a lost-connection report of the taken engine does not drop the call', async () => {
    const { call, engines } = setup();
    call.preJoin('L42', VIDEO_CREDS, 'video', CONFIG);
    await tick();
    await call.begin('L42', VIDEO_CREDS, 'video', CONFIG);
    engines[0]!.events.emit({ type: 'prejoin-lost', reason: 'RECONNECTING' });
    for (let i = 0; i < 5; i++) await tick();
    assert.deepEqual(engines[0]!.log, ['prejoin', 'join']);
    assert.equal(engines.length, 1);
  });
});

describe('LiveCall: the avatar volume', () => {
  it("goes to the call's engine before it joins, and a change to the running one; the next call starts at the last one", async () => {
    const { call, engines } = setup();
    call.setAvatarVolume(40);
    await call.begin('L1', VIDEO_CREDS, 'video', CONFIG);
    call.setAvatarVolume(70);
    await call.end();
    call.setAvatarVolume(20);
    await call.begin('L2', VIDEO_CREDS, 'video', CONFIG);
    assert.deepEqual(engines.map((e) => e.volumes), [['40 before joining', '70 in the call'], ['20 before joining']]);
    assert.deepEqual(engines.map((e) => e.log), [['join', 'leave'], ['join']]);
  });
});
