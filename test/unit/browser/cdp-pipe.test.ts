/**
 * The DevTools protocol over Chromium's pipe (`--remote-debugging-pipe`): NUL-ended JSON both ways,
 * answers matched to commands, every command bounded in time on a fake clock, and a browser that talks
 * nonsense or too much dropped. The browser's end is scripted (test/helpers/cdp-browser.ts); the real
 * Chromium speaks it in test/e2e/browser-lockdown.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { CDP_COMMAND_TIMEOUT_MS, CdpError, MAX_MESSAGE_BYTES, MAX_PENDING_COMMANDS, type CdpEvent } from '../../../electron/browser/cdp-pipe.ts';
import { scriptedBrowser } from '../../helpers/cdp-browser.ts';
import { until } from '../../helpers/until.ts';

/** What a failed command rejected with: its reason and message. */
async function failure(promise: Promise<unknown>): Promise<{ reason: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof CdpError, String(error));
    return { reason: error.reason, message: error.message };
  }
  throw new Error('it succeeded');
}

describe('the DevTools pipe', () => {
  it('sends each command as NUL-ended JSON with a new id (and its session), and resolves it with its own answer', async () => {
    const browser = scriptedBrowser({ clock: new FakeClock() });
    browser.answer('Target.getTargets', { targetInfos: [] });
    const [a, b] = await Promise.all([browser.cdp.send('Target.getTargets'), browser.cdp.send('Page.navigate', { url: 'http://127.0.0.1:1/' }, 'S1')]);
    assert.deepEqual(a, { targetInfos: [] });
    assert.deepEqual(b, {});
    assert.deepEqual(browser.sent, [
      { id: 1, method: 'Target.getTargets', params: {} },
      { id: 2, method: 'Page.navigate', params: { url: 'http://127.0.0.1:1/' }, sessionId: 'S1' },
    ]);
  });

  it('reads messages split across chunks and several in one chunk, and gives events to each listener until it unsubscribes', async () => {
    const browser = scriptedBrowser({ clock: new FakeClock() });
    const seen: CdpEvent[] = [];
    const other: string[] = [];
    const unsubscribe = browser.cdp.onEvent((e) => seen.push(e));
    browser.cdp.onEvent((e) => other.push(e.method));
    const first = JSON.stringify({ method: 'Target.targetCreated', params: { targetInfo: { targetId: 'T1' } } });
    browser.write(first.slice(0, 10));
    browser.write(`${first.slice(10)}\0${JSON.stringify({ method: 'Page.loadEventFired', sessionId: 'S1' })}\0${JSON.stringify({ method: 'A' })}`);
    await until(() => seen.length === 2, { message: 'two events' });
    unsubscribe();
    browser.write('\0');
    await until(() => other.length === 3, { message: 'the third event' });
    assert.deepEqual(seen, [
      { method: 'Target.targetCreated', params: { targetInfo: { targetId: 'T1' } } },
      { method: 'Page.loadEventFired', params: {}, sessionId: 'S1' },
    ]);
    assert.deepEqual(other, ['Target.targetCreated', 'Page.loadEventFired', 'A']);
  });

  it('rejects a command the browser refuses with its message, as `refused`', async () => {
    const browser = scriptedBrowser({ clock: new FakeClock() });
    browser.answer('Target.attachToTarget', { error: 'Not allowed' });
    assert.deepEqual(await failure(browser.cdp.send('Target.attachToTarget', { targetId: 'T1' })), { reason: 'refused', message: 'Target.attachToTarget: Not allowed' });
  });

  it('gives up on a command not answered within its time; a late answer changes nothing and no timer is left', async () => {
    const clock = new FakeClock();
    const browser = scriptedBrowser({ clock });
    browser.answer('Browser.getVersion', 'silent');
    const waiting = failure(browser.cdp.send('Browser.getVersion'));
    await until(() => browser.sent.length === 1, { message: 'sent' });
    await clock.advance(CDP_COMMAND_TIMEOUT_MS - 1);
    assert.equal(clock.pendingCount, 1);
    await clock.advance(1);
    assert.deepEqual(await waiting, { reason: 'timeout', message: 'The browser did not answer Browser.getVersion within 10 s.' });
    browser.answerLate(1, { product: 'late' });
    browser.answer('Browser.getVersion', { product: 'Chrome' });
    assert.deepEqual(await browser.cdp.send('Browser.getVersion'), { product: 'Chrome' });
    assert.equal(clock.pendingCount, 0);
  });

  it(`lets at most ${MAX_PENDING_COMMANDS} commands wait: the next fails at once as busy`, async () => {
    const clock = new FakeClock();
    const browser = scriptedBrowser({ clock });
    browser.answer('Runtime.evaluate', 'silent');
    const waiting = Array.from({ length: MAX_PENDING_COMMANDS }, () => browser.cdp.send('Runtime.evaluate').catch((e: CdpError) => e.reason));
    assert.deepEqual(await failure(browser.cdp.send('Runtime.evaluate')), { reason: 'busy', message: `${MAX_PENDING_COMMANDS} DevTools commands are already waiting (Runtime.evaluate not sent).` });
    browser.cdp.close();
    assert.deepEqual(new Set(await Promise.all(waiting)), new Set(['closed']));
  });

  it('when the browser closes its end: waiting commands fail as closed, onClose says why once, and later commands fail at once', async () => {
    const clock = new FakeClock();
    const browser = scriptedBrowser({ clock });
    browser.answer('Target.setDiscoverTargets', 'silent');
    const why: string[] = [];
    browser.cdp.onClose((w) => why.push(w));
    const waiting = failure(browser.cdp.send('Target.setDiscoverTargets', { discover: true }));
    browser.hangUp();
    assert.deepEqual(await waiting, { reason: 'closed', message: "The browser's DevTools pipe closed before it answered Target.setDiscoverTargets (the browser closed it)." });
    assert.deepEqual(why, ['the browser closed it']);
    assert.equal(browser.cdp.closed, true);
    assert.deepEqual(await failure(browser.cdp.send('Target.getTargets')), { reason: 'closed', message: "The browser's DevTools pipe is closed (Target.getTargets not sent)." });
    const late: string[] = [];
    browser.cdp.onClose((w) => late.push(w));
    assert.deepEqual(late, ['already closed']);
    assert.equal(clock.pendingCount, 0);
  });

  for (const [what, bytes, reason] of [
    ['a message that is not JSON', 'not json\0', 'the browser sent a message that is not JSON'],
    ['JSON that is not of the protocol', '[1,2]\0', 'the browser sent a message that is not of the DevTools protocol'],
    ['an answer with a wrong id type', '{"id":"1","result":{}}\0', 'the browser sent a message that is not of the DevTools protocol'],
    [`a message over ${MAX_MESSAGE_BYTES} bytes`, Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x20), `the browser sent a message over ${MAX_MESSAGE_BYTES} bytes`],
  ] as const) {
    it(`ends the connection on ${what}`, async () => {
      const browser = scriptedBrowser({ clock: new FakeClock() });
      const why: string[] = [];
      browser.cdp.onClose((w) => why.push(w));
      browser.write(bytes);
      await until(() => why.length === 1, { message: 'closed' });
      assert.deepEqual(why, [reason]);
      assert.equal(browser.cdp.closed, true);
    });
  }
});
