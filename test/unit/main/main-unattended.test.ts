/**
 * An unattended kiosk, through main's real entry (electron/main/entry.ts → index.ts) against the recording
 * fake of `electron` (test/electron/stub/): never a dialog, the display kept awake, crashes recovered,
 * the sandbox's absence said out loud, a clean quit the fleet hears about.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connectAsync } from 'mqtt';
import { mosquittoMissing, startBroker } from '../../helpers/mosquitto.ts';
import { runHarness } from '../../helpers/run-main-harness.ts';

describe('main, unattended (electron stubbed)', () => {
  it('a main module that fails to load: no error box, logged, relaunched after a pause', async () => {
    // Module hooks run on their own thread: the variable is set before the harness starts.
    const { facts } = await runHarness('broken-module', { STUB_BROKEN_MODULE: 'electron/main/store.ts' });
    assert.deepEqual(facts.errorBoxes, [], 'Electron showed its modal error box');
    assert.equal(facts.windows, 0);
    assert.equal(facts.logHasStartupError, true);
    assert.match(facts.logText, /store\.ts/);
    assert.deepEqual(facts.relaunches, [null]);
    assert.deepEqual(facts.exitCalls, [1]);
  });

  it('keeps the display awake whenever the kiosk window shows, not only during calls', async () => {
    const { facts } = await runHarness('kiosk');
    assert.deepEqual(facts.powerSaveBeforeShow, []);
    assert.deepEqual(facts.powerSaveShown, ['start:prevent-display-sleep:1']);
    assert.deepEqual(facts.powerSaveMinimizedRestored, ['start:prevent-display-sleep:1', 'stop:1', 'start:prevent-display-sleep:2']);
  });

  it('a GPU crash hangs up and reloads the page; a reload that fails is tried again, never a blank window', async () => {
    const { facts } = await runHarness('renderer-recovery');
    assert.equal(facts.loadsAfterCleanGpuExit, 1, 'a clean GPU exit or another child process needs no reload');
    assert.equal(facts.logHasGpu, true);
    assert.deepEqual(facts.phasesAfterGpuCrash.slice(-2), ['ended', 'idle']);
    assert.equal(facts.failedLoads, 1);
    assert.equal(facts.loads, 4, 'load, reload after the GPU crash, a failed reload, its retry');
    assert.equal(facts.logHasRetry, true);
    assert.equal(facts.relaunchCalls, 0);
  });

  it('under the shipped systemd unit or launchd agent, a restart exits with 75 for the supervisor (no self-relaunch it would kill)', async () => {
    const { facts } = await runHarness('supervised');
    assert.equal(facts.restart.ok, true);
    assert.deepEqual(facts.relaunches, []);
    assert.equal(facts.exitCode, 75);
  });

  it('an AppImage started without the sandbox says so: the log, the staff Status tab and the fleet status', { skip: mosquittoMissing() ?? false }, async () => {
    const broker = await startBroker({ operator: 'op-secret', 'kiosk-s': 'kiosk-s-secret' });
    await broker.start();
    const watcher = await connectAsync(broker.url, { username: 'operator', password: 'op-secret', reconnectPeriod: 0 });
    try {
      const statuses: Record<string, unknown>[] = [];
      watcher.on('message', (_topic, payload) => statuses.push(JSON.parse(payload.toString())));
      await watcher.subscribeAsync('ak/kiosk-s/status', { qos: 1 });
      const { facts } = await runHarness('no-sandbox', {
        HARNESS_MQTT: JSON.stringify({ url: broker.url, kioskId: 'kiosk-s', username: 'kiosk-s', password: 'kiosk-s-secret', topicPrefix: 'ak' }),
      });
      assert.equal(facts.logHasNoSandbox, true);
      const item = (facts.statusAttention as { kind: string; message: string }[]).find((i) => i.kind === 'sandbox');
      assert.ok(item, JSON.stringify(facts.statusAttention));
      assert.match(item.message, /sandbox is OFF/);
      assert.match(item.message, /AppImage/);
      const online = statuses.find((s) => s.online === true);
      assert.equal(online?.sandbox, false, JSON.stringify(statuses));
    } finally {
      await watcher.endAsync();
      await broker.dispose();
    }
  });

  it('with the sandbox on, staff see nothing to fix', async () => {
    const { facts } = await runHarness('companion');
    assert.equal((facts.statusAttention as { kind: string }[]).some((i) => i.kind === 'sandbox'), false);
  });

  it('from a checkout (not packaged) the window defaults to windowed; an installed app to the kiosk', async () => {
    const checkout = await runHarness('default-window', { STUB_IS_PACKAGED: '' });
    assert.equal(checkout.facts.windowOptions.kiosk, undefined);
    assert.equal(checkout.facts.windowOptions.fullscreen, undefined);
    assert.equal(checkout.facts.configGet.value.windowMode, 'windowed');
    const installed = await runHarness('default-window', { STUB_IS_PACKAGED: '1' });
    assert.equal(installed.facts.windowOptions.kiosk, true);
    assert.equal(installed.facts.configGet.value.windowMode, 'kiosk');
  });

  it('on Linux, turns on the desktop portal for global shortcuts before ready (Wayland)', async () => {
    const { facts } = await runHarness('default-window');
    assert.deepEqual(facts.switchesBeforeReady, process.platform === 'linux' ? ['--enable-features=GlobalShortcutsPortal'] : []);
  });

  it('a fleet reload that fails does not leave the window blank: the page is brought back', { skip: mosquittoMissing() ?? false }, async () => {
    const broker = await startBroker({ operator: 'op-secret', 'kiosk-r': 'kiosk-r-secret' });
    await broker.start();
    const operator = await connectAsync(broker.url, { username: 'operator', password: 'op-secret', reconnectPeriod: 0 });
    try {
      // The command goes out once the kiosk says it is online.
      operator.on('message', (topic, payload) => {
        if (topic === 'ak/kiosk-r/status' && JSON.parse(payload.toString()).online === true) {
          void operator.publishAsync('ak/kiosk-r/cmd', JSON.stringify({ id: 'r1', cmd: 'reload', expiresAt: new Date(Date.now() + 60_000).toISOString() }), { qos: 1 });
        }
      });
      await operator.subscribeAsync('ak/kiosk-r/status', { qos: 1 });
      const { facts } = await runHarness('fleet-reload', {
        HARNESS_MQTT: JSON.stringify({ url: broker.url, kioskId: 'kiosk-r', username: 'kiosk-r', password: 'kiosk-r-secret', topicPrefix: 'ak' }),
      });
      assert.equal(facts.failedLoads, 1);
      assert.equal(facts.loads, 3, 'the first load, the fleet\'s reload that failed, the recovery');
      assert.equal(facts.logHasRecovery, true);
    } finally {
      await operator.endAsync();
      await broker.dispose();
    }
  });
});
