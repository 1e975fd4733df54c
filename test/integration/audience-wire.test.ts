/**
 * Safe by default, on the wire: the administrator's policy file on disk → the browser-mode kiosk
 * (electron/browser/kiosk-host.ts: the kiosk, staff operations, the fleet wiring) → a visitor's tap through
 * the page's channel → the create body the emulator received (`receivedRequest`: as sent, before the
 * gateway fills in its own defaults). A public kiosk asks for `moderation: "strict"` itself, on both
 * surfaces; nothing but the policy file (or config.json where no policy file exists) makes it adult.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../electron/core/log.ts';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { startBrowserKiosk, type BrowserKiosk } from '../../electron/browser/kiosk-host.ts';
import { parseCommand } from '../../electron/fleet/commands.ts';
import { applyRemoteSettings } from '../../electron/fleet/fleet-host.ts';
import { jsonFilePersistence } from '../../electron/operations/settings.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { GATE_CLOSED_MESSAGE, STAFF_CHECK_MESSAGE } from '../../electron/kiosk/age-gate.ts';
import { STAFF_LOCKED_MESSAGE } from '../../electron/kiosk/channels.ts';
import { realDelay, until } from '../helpers/until.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const KEY = 'sk-audience-wire-7Kq2Lm9Xv4Np8Rt3';
const WAIT_MS = 15_000;

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

let emulator: EmulatorHandle | null = null;
async function theEmulator(): Promise<EmulatorHandle> {
  if (!emulator) {
    const emu = await startEmulator({ accounts: [{ apiKey: KEY }], knobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 20 } });
    closers.unshift(() => emu.close()); // closed last, after every kiosk
    emulator = emu;
  }
  return emulator;
}

function rendererDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-audience-renderer-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>kiosk</title>');
  return dir;
}

interface Setup {
  surface: 'direct' | 'gateway';
  /** The policy file's content; absent: no policy file on disk. */
  policy?: Record<string, unknown>;
  /** config.json beside the staff PIN (the installer's and the staff panel's file). */
  config?: Record<string, unknown>;
}

/** A kiosk installed as a venue would: config.json in its data folder, the policy file where the
 *  administrator put it (root's, mode 0644), prewarm off so each create is a visitor's. */
async function installedKiosk(setup: Setup): Promise<{ kiosk: BrowserKiosk; emu: EmulatorHandle; dataDir: string; policyFile: string }> {
  const emu = await theEmulator();
  const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-audience-data-'));
  const policyDir = mkdtempSync(join(tmpdir(), 'kiosk-audience-policy-'));
  const policyFile = join(policyDir, 'policy.json');
  if (setup.policy) writeFileSync(policyFile, JSON.stringify(setup.policy), { mode: 0o644 });
  const service = setup.surface === 'gateway' ? { surface: 'gateway', gatewayUrl: emu.gatewayUrl } : { surface: 'direct', baseUrl: emu.baseUrl };
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ staffPinHash: await hashPin('246813'), service, prewarm: { mode: 'off' }, ...setup.config }));
  const kiosk = await startBrowserKiosk({
    dataDir,
    env: { AVATAR_KIOSK_POLICY: policyFile, ...(setup.surface === 'direct' ? { AVATAR_API_KEY: KEY } : {}) },
    appRoot: ROOT,
    rendererDir: rendererDir(),
    logger: silentLogger,
    version: '0.0.0-test',
  });
  closers.push(() => kiosk.close());
  return { kiosk, emu, dataDir, policyFile };
}

/** A visitor's tap, as the page sends it; answers the create body the emulator received for it. */
async function tapAndReadCreateBody(kiosk: BrowserKiosk, emu: EmulatorHandle): Promise<Record<string, unknown>> {
  const r = (await kiosk.channels.dispatch('kiosk:session:start', { callMode: 'audio' })) as { ok: boolean; value?: { liveId: string | null } };
  assert.equal(r.ok, true, JSON.stringify(r));
  const liveId = r.value!.liveId;
  assert.ok(liveId, 'a session was created');
  await until(() => emu.getSession(liveId) !== undefined, { realTimeoutMs: WAIT_MS, message: 'the session on the emulator' });
  const body = emu.getSession(liveId)!.receivedRequest as Record<string, unknown>;
  await kiosk.channels.dispatch('kiosk:session:hangup', undefined);
  await until(() => !kiosk.kiosk.calls.running, { realTimeoutMs: WAIT_MS, message: 'the call over' });
  return body;
}

describe('a kiosk\'s audience on the wire', () => {
  it('public by default over the gateway: the create body asks for moderation "strict" (the gateway\'s own default is disabled)', async () => {
    const { kiosk, emu } = await installedKiosk({ surface: 'gateway' });
    const body = await tapAndReadCreateBody(kiosk, emu);
    assert.equal(body.moderation, 'strict');
    assert.deepEqual(kiosk.kiosk.config.safety, { audience: 'public', requested: 'public', moderation: 'strict', region: null, refusal: null, ageGate: null });
  });

  it('public by default on the direct surface too, even with moderation "disabled" in config.json', async () => {
    const { kiosk, emu } = await installedKiosk({ surface: 'direct', config: { moderation: 'disabled' } });
    const body = await tapAndReadCreateBody(kiosk, emu);
    assert.equal(body.moderation, 'strict');
  });

  it('a policy file that says nothing of the audience keeps config.json\'s "adult" out, and says why', async () => {
    const { kiosk, emu } = await installedKiosk({
      surface: 'gateway',
      policy: { avatar: { name: 'Ava' } },
      config: { audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'] } },
    });
    const body = await tapAndReadCreateBody(kiosk, emu);
    assert.equal(body.moderation, 'strict');
    assert.equal(kiosk.kiosk.config.safety.audience, 'public');
    assert.equal(
      kiosk.kiosk.config.safety.refusal,
      'config.json asks for audience "adult", but an administrator\'s policy file manages this kiosk: only the policy file can make it adult. It runs as public (moderation strict).',
    );
  });

  it('an adult policy outside its allowed regions runs public, and says why', async () => {
    const { kiosk, emu } = await installedKiosk({ surface: 'gateway', policy: { audience: 'adult', region: 'FR', adult: { allowedRegions: ['DE', 'US-NV'] } } });
    const body = await tapAndReadCreateBody(kiosk, emu);
    assert.equal(body.moderation, 'strict');
    assert.equal(kiosk.kiosk.config.safety.refusal, 'Audience "adult" is not allowed in region FR (adult.allowedRegions: DE, US-NV), so the kiosk runs as public (moderation strict).');
  });

  it('an adult policy without a region runs public, and says why', async () => {
    const { kiosk } = await installedKiosk({ surface: 'direct', policy: { audience: 'adult', adult: { allowedRegions: ['DE'] } } });
    assert.equal(kiosk.kiosk.config.safety.audience, 'public');
    assert.equal(kiosk.kiosk.config.safety.refusal, 'Audience "adult" needs the venue\'s region (ISO 3166, e.g. "DE"); none is set, so the kiosk runs as public (moderation strict).');
  });

  it('a fleet `apply` cannot make a policy-managed kiosk adult: the command is refused, and an allowed apply keeps it strict', async () => {
    const { kiosk, emu, dataDir } = await installedKiosk({ surface: 'gateway', policy: { avatar: { persona: 'A guide.' } }, config: { audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'] } } });
    const refused = parseCommand(JSON.stringify({ id: 'c1', cmd: 'apply', expiresAt: new Date(Date.now() + 60_000).toISOString(), settings: { audience: 'adult' } }));
    assert.deepEqual(refused, {
      ok: false,
      id: 'c1',
      cmd: 'apply',
      message: '"apply" cannot change "audience"; it may change only avatar.name, avatar.persona, cast, schedule, idle.promptSeconds, idle.hangupSeconds.',
    });
    const policyLayer = { policy: { avatar: { persona: 'A guide.' }, audience: undefined, adult: undefined, region: undefined } };
    const applied = await applyRemoteSettings({ avatar: { name: 'Nova' } }, { kiosk: kiosk.kiosk, configFile: jsonFilePersistence(join(dataDir, 'config.json')), env: {}, policy: policyLayer.policy, appRoot: ROOT });
    assert.deepEqual(applied, ['avatar.name']);
    assert.equal(kiosk.kiosk.config.avatar.name, 'Nova', 'the apply took effect');
    const body = await tapAndReadCreateBody(kiosk, emu);
    assert.equal(body.moderation, 'strict');
    assert.equal(kiosk.kiosk.config.safety.audience, 'public');
  });

  describe('an adult kiosk (the policy says adult, in an allowed region)', () => {
    const ADULT = { audience: 'adult', region: 'DE-BY', adult: { allowedRegions: ['AT', 'DE'] } };

    it('creates nothing before its gate is passed, not even a spare, and sends moderation "disabled" after', async () => {
      const { kiosk, emu } = await installedKiosk({ surface: 'gateway', policy: ADULT, config: { prewarm: { mode: 'always' } } });
      const before = emu.listSessions().length;
      assert.deepEqual(kiosk.kiosk.config.safety, { audience: 'adult', requested: 'adult', moderation: 'disabled', region: 'DE-BY', refusal: null, ageGate: { minimumAge: 18, ageCheck: 'self' } });
      // The attract screen shows with someone in front of it: a public kiosk would make a spare now.
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:attract:report', { showing: true, present: true }), { ok: true, value: undefined });
      await realDelay(300);
      assert.equal(emu.listSessions().length, before, 'no spare');
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:start', { callMode: 'audio' }), { ok: false, error: { code: 'invalid_request', message: GATE_CLOSED_MESSAGE } });
      assert.equal(emu.listSessions().length, before, 'nothing created without the gate');

      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:age-gate-ask', undefined), { ok: true, value: { required: true, minimumAge: 18, ageCheck: 'self' } });
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:age-gate-answer', { confirmed: false }), { ok: true, value: { passed: false } });
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:start', { callMode: 'audio' }), { ok: false, error: { code: 'invalid_request', message: GATE_CLOSED_MESSAGE } });
      assert.equal(emu.listSessions().length, before, 'a "no" creates nothing');

      await kiosk.channels.dispatch('kiosk:session:age-gate-ask', undefined);
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:age-gate-answer', { confirmed: true }), { ok: true, value: { passed: true } });
      const body = await tapAndReadCreateBody(kiosk, emu);
      assert.equal(body.moderation, 'disabled');
      // The pass was for that one call.
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:start', { callMode: 'audio' }), { ok: false, error: { code: 'invalid_request', message: GATE_CLOSED_MESSAGE } });
      assert.deepEqual(kiosk.kiosk.ageGateCounts(), { asked: 2, confirmed: 1, declined: 1 });
    });

    it('`ageCheck: staff`: the visitor cannot answer for themselves; staff unlock the call with the PIN', async () => {
      const { kiosk, emu } = await installedKiosk({ surface: 'direct', policy: { ...ADULT, adult: { ...ADULT.adult, ageCheck: 'staff', minimumAge: 21 } } });
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:age-gate-ask', undefined), { ok: true, value: { required: true, minimumAge: 21, ageCheck: 'staff' } });
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:age-gate-answer', { confirmed: true }), { ok: false, error: { code: 'forbidden', message: STAFF_CHECK_MESSAGE } });
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:age-gate-staff-unlock', undefined), { ok: false, error: { code: 'unauthorized', message: STAFF_LOCKED_MESSAGE } });
      const unlocked = (await kiosk.channels.dispatch('kiosk:staff:unlock', { pin: '246813' })) as { ok: boolean; value?: { unlocked: boolean } };
      assert.equal(unlocked.ok && unlocked.value?.unlocked, true);
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:session:age-gate-staff-unlock', undefined), { ok: true, value: { passed: true } });
      await kiosk.channels.dispatch('kiosk:staff:lock', undefined);
      const body = await tapAndReadCreateBody(kiosk, emu);
      assert.equal(body.moderation, 'disabled');
      assert.deepEqual(kiosk.kiosk.ageGateCounts(), { asked: 1, confirmed: 1, declined: 0 });
    });
  });
});
