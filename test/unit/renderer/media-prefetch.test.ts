/**
 * MediaPrefetch (renderer/src/rtc/media-prefetch.ts): the devices opened at the tap are handed to the
 * engine that asks for the same constraints, once; anything no engine took is stopped on release.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MediaPrefetch } from '../../../renderer/src/rtc/media-prefetch.ts';

const MIC: MediaStreamConstraints = { audio: { echoCancellation: true }, video: false };
const CAM: MediaStreamConstraints = { audio: false, video: { width: { ideal: 640 } } };

/** A getUserMedia fake: records calls, hands out numbered streams whose tracks record stop(). */
function fakeGum(fail: Set<string> = new Set()) {
  const calls: string[] = [];
  const stopped: string[] = [];
  let n = 0;
  const gum = async (c: MediaStreamConstraints): Promise<MediaStream> => {
    const kind = c.audio ? 'mic' : 'cam';
    calls.push(kind);
    if (fail.has(kind)) throw Object.assign(new Error('denied'), { name: 'NotAllowedError' });
    const id = `${kind}#${++n}`;
    return { id, getTracks: () => [{ stop: () => stopped.push(id) }] } as unknown as MediaStream;
  };
  return { gum, calls, stopped };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('MediaPrefetch', () => {
  it('opens the devices at once and hands each prefetched stream to the first matching request only', async () => {
    const f = fakeGum();
    const media = new MediaPrefetch(f.gum);
    media.prefetch([MIC, CAM]);
    assert.deepEqual(f.calls, ['mic', 'cam'], 'both devices were asked for at the tap');
    assert.equal((await media.getUserMedia({ ...MIC })).id, 'mic#1');
    assert.equal((await media.getUserMedia(CAM)).id, 'cam#2');
    assert.equal((await media.getUserMedia(MIC)).id, 'mic#3', 'a second request opens a fresh stream');
    assert.deepEqual(f.calls, ['mic', 'cam', 'mic']);
    media.release();
    await flush();
    assert.deepEqual(f.stopped, [], 'taken streams belong to the engine');
  });

  it('does not match different constraints', async () => {
    const f = fakeGum();
    const media = new MediaPrefetch(f.gum);
    media.prefetch([MIC]);
    assert.equal((await media.getUserMedia({ audio: true, video: false })).id, 'mic#2');
    media.release();
    await flush();
    assert.deepEqual(f.stopped, ['mic#1']);
  });

  it('stops what no engine took on release, and when a new prefetch replaces it', async () => {
    const f = fakeGum();
    const media = new MediaPrefetch(f.gum);
    media.prefetch([MIC, CAM]);
    media.prefetch([MIC]);
    await flush();
    assert.deepEqual(f.stopped, ['mic#1', 'cam#2']);
    media.release();
    media.release();
    await flush();
    assert.deepEqual(f.stopped, ['mic#1', 'cam#2', 'mic#3']);
  });

  it('hands a refusal to the engine that asks, with its error', async () => {
    const f = fakeGum(new Set(['mic']));
    const media = new MediaPrefetch(f.gum);
    media.prefetch([MIC]);
    await flush(); // nothing unhandled while no one has asked yet
    await assert.rejects(media.getUserMedia(MIC), { name: 'NotAllowedError' });
  });
});
