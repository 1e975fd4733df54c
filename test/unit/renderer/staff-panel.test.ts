/**
 * StaffPanel (renderer/src/staff/StaffPanel.svelte.ts): the hidden way in, the PIN pad's flows, the
 * 60 s self-close, and the settings form's messages, against a scripted fake of `window.kiosk.staff`
 * on a fake clock. (The real main-side PIN store and lock-out are tested on the main side; the E2E
 * drives both together.)
 */
/// <reference types="svelte" />
import '../../helpers/svelte-runes.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import type { EditableSettings, KioskApi, PinState, Result, StaffSettings, WireReport } from '../../../electron/contract.ts';
import { emptyFunnelCounts } from '../../../electron/core/funnel.ts';

const { StaffPanel, localFieldErrors, cleanSettings, LONG_PRESS_MS, INACTIVITY_CLOSE_MS, MAX_PICTURE_BYTES } = await import('../../../renderer/src/staff/StaffPanel.svelte.ts');

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const fail = (code: 'unauthorized' | 'locked' | 'invalid_request', message: string): Result<never> => ({ ok: false, error: { code: code as never, message } });

const SETTINGS: EditableSettings = {
  service: { surface: 'direct' },
  callMode: 'video',
  allowModeChoice: true,
  avatar: { imagePath: 'resources/demo-avatar.png', persona: 'A host.', name: 'Ava', voice: 'Tina' },
  window: { mode: 'kiosk', width: 1280, height: 800 },
  rtcEngine: 'auto',
  returnToAttractSeconds: 15,
  countdownWarningSeconds: 30,
  idle: { promptSeconds: 45, hangupSeconds: 15 },
};

/** A service check's wire report: JSON pings of type 3 every 5 s, no ack (nothing billed), two error bodies. */
const WIRE_REPORT: WireReport = {
  report: 'avatar-kiosk wire report',
  version: 1,
  source: 'service-check',
  surface: 'direct',
  created_at: '2026-11-28T10:00:00.000Z',
  http: [
    { endpoint: 'GET /lives/{live_id}', status: 404, content_type: 'application/json', body: 'json', shape: { error: { code: 'string = not_found', message: 'string' } }, count: 1 },
    { endpoint: 'POST /lives', status: 201, content_type: 'application/json', body: 'json', shape: { live: { id: 'string' } }, count: 1 },
    { endpoint: 'GET /voices', status: 401, content_type: 'text/html', body: 'html', count: 1 },
  ],
  socket: {
    connections: 1,
    refused_handshakes: [],
    messages: [{ role: 'ping', type: 3, shape: { type: 'number = 3', payload: { ping: { ts: 'number (integer)' } } }, count: 2 }],
    ack: null,
    ping: { format: 'json', type: 3, shape: { type: 'number = 3' }, count: 2, period_ms: { min: 5000, median: 5000, max: 5000, samples: 1 } },
    control_frames: { ping: 0, pong: 0 },
    client_sent: { messages: { '4': 2, '5': 1 }, ping_frames: 0, pong_frames: 0 },
    closes: [{ code: 1000, by: 'client', after_client_message_ms: 3 }],
  },
  not_seen: ['conn_init_ack: not seen'],
};

/** A fake of main's staff API with the real rules: 5 tries, then locked for 60 s; 60 s unlock. */
class FakeStaff {
  /** What the status says about restarting (absent: a host that can). */
  canRestart: boolean | undefined = undefined;
  pin: string | null = null;
  unlocked = false;
  tries = 5;
  lockedUntil = 0;
  calls: string[] = [];
  saveAnswer: Result<unknown> | null = null;
  constructor(readonly clock: FakeClock) {}
  state(): PinState {
    return { pinSet: this.pin !== null, unlocked: this.unlocked, lockedForMs: Math.max(0, this.lockedUntil - this.clock.now()), attemptsLeft: this.tries, outOfOrder: null };
  }
  settings(): StaffSettings {
    return { settings: structuredClone(SETTINGS), hasApiKey: false, apiKeySource: 'none', managed: [] };
  }
  api(): KioskApi['staff'] {
    const log = (name: string) => this.calls.push(name);
    const guarded = <T>(name: string, value: () => T) => async (): Promise<Result<T>> => {
      log(name);
      return this.unlocked ? ok(value()) : fail('unauthorized', 'The staff panel is locked.');
    };
    return {
      pinState: async () => (log('pinState'), ok(this.state())),
      setPin: async ({ pin }) => {
        log(`setPin:${pin}`);
        this.pin = pin;
        this.unlocked = true;
        return ok(this.state());
      },
      unlock: async ({ pin }) => {
        log(`unlock:${pin}`);
        if (this.lockedUntil > this.clock.now()) return fail('locked', 'Locked.');
        if (pin !== this.pin) {
          this.tries--;
          if (this.tries === 0) {
            this.lockedUntil = this.clock.now() + 60_000;
            this.tries = 5;
            return fail('locked', 'Locked for 60 s.');
          }
          return fail('unauthorized', `Wrong PIN, ${this.tries} tries left.`);
        }
        this.unlocked = true;
        return ok(this.state());
      },
      lock: async () => {
        log('lock');
        this.unlocked = false;
        return ok(undefined);
      },
      status: guarded('status', () => ({ mode: 'demo' as const, serviceUrl: null, hasApiKey: false, apiKeySource: 'none' as const, apiKeyWeaklyProtected: false, attention: [], errors: [], version: '0.1.0', uptimeS: 5, today: { sessions: 0, credits: 0, unknownCredits: 0, demoSessions: 0 }, openAtLogin: null, avatarVolume: 100, safety: { audience: 'public' as const, moderation: 'strict' as const, region: null, refusal: null, ageGate: null, auditViolations: 0 }, ...(this.canRestart === undefined ? {} : { canRestart: this.canRestart }) })),
      getSettings: guarded('getSettings', () => this.settings()),
      saveSettings: async ({ settings }) => {
        log(`saveSettings:${settings.avatar.name}`);
        if (!this.unlocked) return fail('unauthorized', 'locked');
        return (this.saveAnswer as Result<never>) ?? ok({ saved: true, settings: { ...this.settings(), settings }, restartRequired: false });
      },
      setApiKey: async () => ok(this.settings()),
      listVoices: guarded('listVoices', () => ({ builtIn: ['Tina'], custom: [], current: 'Tina' })),
      cloneVoice: async ({ voice }) => ok({ voice }),
      runDoctor: guarded('runDoctor', () => ({ ok: true, checks: [] })),
      wireReport: guarded('wireReport', () => ({ ok: true, message: 'Recorded.', report: WIRE_REPORT, savedTo: '/data/wire-report.json' })),
      networkCheckStart: guarded('networkCheckStart', () => ({ checkId: 'live-check', rtc: { app_id: 'a', channel_id: 'c', user_id: 'u', token: 't', token_expire_at: '0' }, cloudProxy: 'off' as const })),
      networkCheckFinish: async ({ outcome }) => (log('networkCheckFinish'), ok({ ...outcome, sessionClosed: true, creditsCost: 0 })),
      ledgerTotals: guarded('ledgerTotals', () => {
        const row = { sessions: 0, credits: 0, billedSeconds: 0, unknownCredits: 0, demoSessions: 0 };
        return { today: row, last7Days: row, month: row };
      }),
      ledgerCsv: async () => ok({ fileName: 'ledger.csv', csv: 'a,b\n' }),
      visitors: guarded('visitors', () => ({ timeZone: 'UTC', threshold: 5, today: { day: '2026-01-01', counts: emptyFunnelCounts() }, hours: [], days: [], counting: { presence: false } })),
      logTail: guarded('logTail', () => ({ lines: [] })),
      setAvatarVolume: async ({ percent }) => (log(`setAvatarVolume:${percent}`), this.unlocked ? ok({ percent }) : fail('unauthorized', 'The staff panel is locked.')),
      setOpenAtLogin: async () => ok(undefined),
      exitKiosk: async () => ok(undefined),
      restart: async () => ok(undefined),
    };
  }
}

function setup(options: { pin?: string | null; canOpen?: boolean } = {}) {
  const clock = new FakeClock(0);
  const fake = new FakeStaff(clock);
  fake.pin = options.pin === undefined ? '2468' : options.pin;
  let canOpen = options.canOpen ?? true;
  let saved = 0;
  const panel = new StaffPanel({ staff: fake.api(), canOpen: () => canOpen, onSettingsSaved: () => void saved++, clock });
  const type = async (pin: string) => {
    for (const d of pin) panel.pressDigit(d);
    await panel.submitPin();
  };
  return { clock, fake, panel, type, setCanOpen: (v: boolean) => (canOpen = v), saves: () => saved };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

describe('StaffPanel', () => {
  describe('the way in', () => {
    it('opens after the corner is held for 3 s, not when released earlier', async () => {
      const { clock, panel } = setup();
      panel.cornerDown();
      await clock.advance(LONG_PRESS_MS - 1);
      panel.cornerUp();
      await clock.advance(10_000);
      assert.equal(panel.view, 'closed');
      panel.cornerDown();
      await clock.advance(LONG_PRESS_MS);
      await settle();
      assert.equal(panel.view, 'pin');
      assert.equal(panel.pinStep, 'enter');
    });

    it('opens on Ctrl+Shift+S and Ctrl+Alt+K, and ignores other keys while closed', async () => {
      for (const combo of [{ key: 'S', ctrlKey: true, shiftKey: true, altKey: false }, { key: 'k', ctrlKey: true, shiftKey: false, altKey: true }]) {
        const { panel } = setup();
        assert.equal(panel.handleKey({ key: 's', ctrlKey: false, shiftKey: true, altKey: false }), false);
        assert.equal(panel.handleKey(combo), true);
        await settle();
        assert.equal(panel.view, 'pin');
      }
    });

    it('never opens while a call is active', async () => {
      const { clock, panel, fake } = setup({ canOpen: false });
      panel.handleKey({ key: 's', ctrlKey: true, shiftKey: true, altKey: false });
      panel.cornerDown();
      await clock.advance(LONG_PRESS_MS);
      await settle();
      assert.equal(panel.view, 'closed');
      assert.deepEqual(fake.calls, []);
    });
  });

  describe('the PIN pad', () => {
    it('on first use asks to choose and confirm a PIN; a mismatch starts over; a match opens the panel', async () => {
      const { panel, type, fake } = setup({ pin: null });
      await panel.open();
      assert.equal(panel.pinStep, 'choose');
      await type('13579');
      assert.equal(panel.pinStep, 'choose', 'a new PIN needs 6 digits');
      assert.equal(panel.pinMessage, 'The PIN has 6 to 8 digits.');
      panel.clearPin();
      await type('135792');
      assert.equal(panel.pinStep, 'confirm');
      await type('135793');
      assert.equal(panel.pinStep, 'choose');
      assert.equal(panel.pinMessage, 'The two PINs were different. Choose a PIN again.');
      await type('135792');
      await type('135792');
      await settle();
      assert.equal(panel.view, 'panel');
      assert.equal(fake.pin, '135792');
      assert.deepEqual(fake.calls.slice(0, 3), ['pinState', 'setPin:135792', 'status']);
    });

    it('refuses fewer than 4 digits without asking main, and takes at most 8', async () => {
      const { panel, type, fake } = setup();
      await panel.open();
      await type('12');
      assert.equal(panel.pinMessage, 'The PIN has 4 to 8 digits.');
      assert.deepEqual(fake.calls, ['pinState']);
      panel.clearPin();
      for (const d of '1234567890') panel.pressDigit(d);
      assert.equal(panel.pinLength, 8);
    });

    it('says how many tries are left, then shows the lock-out counting down, then lets staff in', async () => {
      const { clock, panel, type } = setup();
      await panel.open();
      const messages: string[] = [];
      for (let i = 0; i < 4; i++) {
        await type('0000');
        messages.push(panel.pinMessage ?? '');
      }
      assert.deepEqual(messages, ['Wrong PIN. 4 tries left.', 'Wrong PIN. 3 tries left.', 'Wrong PIN. 2 tries left.', 'Wrong PIN. 1 try left.']);
      await type('0000');
      assert.equal(panel.pinMessage, 'Too many wrong tries.');
      assert.equal(panel.lockedForS, 60);
      panel.pressDigit('2'); // the pad ignores digits while locked
      assert.equal(panel.pinLength, 0);
      await clock.advance(1_000);
      assert.equal(panel.lockedForS, 59);
      panel.activity(); // keep the panel from closing itself while staff wait
      await clock.advance(50_000);
      panel.activity();
      await clock.advance(9_000);
      assert.equal(panel.lockedForS, null);
      assert.equal(panel.pinMessage, null);
      await type('2468');
      await settle();
      assert.equal(panel.view, 'panel');
    });

    it('Escape closes the pad, digits and Enter typed on a keyboard work', async () => {
      const { panel } = setup();
      await panel.open();
      for (const key of ['2', '4', '6', '8']) panel.handleKey({ key, ctrlKey: false, shiftKey: false, altKey: false });
      assert.equal(panel.pinLength, 4);
      panel.handleKey({ key: 'Backspace', ctrlKey: false, shiftKey: false, altKey: false });
      assert.equal(panel.pinLength, 3);
      panel.handleKey({ key: 'Escape', ctrlKey: false, shiftKey: false, altKey: false });
      await settle();
      assert.equal(panel.view, 'closed');
    });
  });

  describe('the open panel', () => {
    it('closes itself (and tells main) after 60 s without input; input restarts the 60 s', async () => {
      const { clock, panel, type, fake } = setup();
      await panel.open();
      await type('2468');
      await settle();
      await clock.advance(INACTIVITY_CLOSE_MS - 1_000);
      panel.activity();
      await clock.advance(INACTIVITY_CLOSE_MS - 1);
      assert.equal(panel.view, 'panel');
      await clock.advance(1);
      await settle();
      assert.equal(panel.view, 'closed');
      assert.equal(fake.calls.at(-1), 'lock');
      assert.equal(fake.unlocked, false);
      assert.equal(clock.pendingCount, 0);
    });

    it('keeps main’s unlock alive while staff type without making calls (at most one keep-alive per 20 s)', async () => {
      const { clock, panel, type, fake } = setup();
      await panel.open();
      await type('2468');
      await settle();
      const before = fake.calls.length;
      await clock.advance(10_000);
      panel.activity(); // 10 s after the last call: nothing sent
      assert.equal(fake.calls.length, before);
      await clock.advance(15_000);
      panel.activity(); // 25 s: one keep-alive
      panel.activity();
      await settle();
      assert.deepEqual(fake.calls.slice(before), ['status']);
      assert.equal(panel.busy, false, 'the keep-alive does not disable the buttons');
    });

    it('goes back to the PIN pad when main answers unauthorized (it forgot the unlock)', async () => {
      const { panel, type, fake } = setup();
      await panel.open();
      await type('2468');
      await settle();
      fake.unlocked = false;
      await panel.setTab('ledger');
      assert.equal(panel.view, 'pin');
      assert.equal(panel.pinMessage, 'The panel locked itself. Enter the PIN again.');
      assert.equal(panel.ledger, null);
    });

    it('shows main’s per-field messages when saving fails, and reloads the kiosk when it succeeds', async () => {
      const { panel, type, fake, saves } = setup();
      await panel.open();
      await type('2468');
      await settle();
      await panel.setTab('settings');
      assert.equal(panel.draft?.avatar.name, 'Ava');
      panel.draft!.avatar.name = 'Max';
      fake.saveAnswer = ok({ saved: false, fieldErrors: { 'idle.promptSeconds': 'Between 5 and 600 seconds.' } });
      assert.equal(await panel.saveSettings(), false);
      assert.deepEqual(panel.fieldErrors, { 'idle.promptSeconds': 'Between 5 and 600 seconds.' });
      assert.equal(saves(), 0);
      fake.saveAnswer = null;
      assert.equal(await panel.saveSettings(), true);
      assert.deepEqual(panel.fieldErrors, {});
      assert.equal(panel.saveMessage, 'Saved. The kiosk uses the new settings now.');
      assert.equal(saves(), 1);
      assert.deepEqual(fake.calls.filter((c) => c.startsWith('saveSettings')), ['saveSettings:Max', 'saveSettings:Max']);
    });

    it('a save that needs a restart points to the System tab where the host can restart, and to the next start where it cannot', async () => {
      for (const [canRestart, message] of [
        [undefined, 'Saved. Some changes apply after a restart (System tab).'],
        [false, 'Saved. Some changes apply when the kiosk is next started.'],
      ] as const) {
        const { panel, type, fake } = setup();
        fake.canRestart = canRestart;
        await panel.open();
        await type('2468');
        await settle();
        await panel.setTab('settings');
        fake.saveAnswer = ok({ saved: true, settings: fake.settings(), restartRequired: true });
        assert.equal(await panel.saveSettings(), true);
        assert.equal(panel.saveMessage, message, String(canRestart));
      }
    });

    it('refuses a picture that is not PNG/JPEG/WEBP or too large, and turns a good one into a data: URI', async () => {
      const { panel, type } = setup();
      await panel.open();
      await type('2468');
      await settle();
      await panel.setTab('settings');
      const file = (type: string, size: number, bytes = new Uint8Array([1, 2, 3])) => ({ name: 'me.png', type, size, arrayBuffer: async () => bytes.buffer as ArrayBuffer });
      await panel.pickPicture(file('image/gif', 10));
      assert.equal(panel.fieldErrors['avatar.imagePath'], 'Pick a PNG, JPEG or WEBP picture.');
      await panel.pickPicture(file('image/png', MAX_PICTURE_BYTES + 1));
      assert.equal(panel.fieldErrors['avatar.imagePath'], 'That picture is 10.0 MB; pick one under 10.0 MB.');
      await panel.pickPicture(file('image/png', 3));
      assert.equal(panel.draft?.avatar.imagePath, 'data:image/png;base64,AQID');
      assert.equal(panel.fieldErrors['avatar.imagePath'], undefined);
      assert.equal(panel.pickedPicture, 'Picked: me.png (0.0 MB)');
    });
  });

  describe('form helpers', () => {
    it('localFieldErrors flags numbers that are not numbers and an empty name; an empty max call length is fine', () => {
      const bad = structuredClone(SETTINGS);
      bad.idle.promptSeconds = Number.NaN;
      bad.avatar.name = '  ';
      (bad as { maxCallSeconds?: number | null }).maxCallSeconds = null;
      assert.deepEqual(localFieldErrors(bad), { 'idle.promptSeconds': 'Enter a number.', 'avatar.name': 'Give the avatar a name.' });
      assert.deepEqual(localFieldErrors(SETTINGS), {});
    });

    it('cleanSettings drops empty optional fields', () => {
      const s = structuredClone(SETTINGS);
      s.service.baseUrl = ' ';
      s.avatar.persona = '';
      (s as { maxCallSeconds?: number | null }).maxCallSeconds = null; // what an emptied number input gives
      const out = cleanSettings(s);
      assert.equal('baseUrl' in out.service, false);
      assert.equal('persona' in out.avatar, false);
      assert.equal('maxCallSeconds' in out, false);
      assert.deepEqual(out.idle, SETTINGS.idle);
    });
  });
});

describe('the Status tab: the API key line', () => {
  it('says where the key comes from and, for a stored one, how well it is protected (unknown said as such)', async () => {
    const { apiKeyText } = await import('../../../renderer/src/staff/status.svelte.ts');
    assert.equal(apiKeyText({ hasApiKey: false, apiKeySource: 'none', apiKeyWeaklyProtected: false }), 'Not set');
    assert.equal(apiKeyText({ hasApiKey: true, apiKeySource: 'env', apiKeyWeaklyProtected: false }), 'Set (from the environment: AVATAR_API_KEY)');
    assert.equal(apiKeyText({ hasApiKey: true, apiKeySource: 'stored', apiKeyWeaklyProtected: false }), 'Set (stored, encrypted by the system keystore)');
    assert.equal(
      apiKeyText({ hasApiKey: true, apiKeySource: 'stored', apiKeyWeaklyProtected: true }),
      'Set (stored, only weakly protected: the system keyring is not used). Prefer AVATAR_API_KEY.',
    );
    assert.equal(
      apiKeyText({ hasApiKey: true, apiKeySource: 'stored', apiKeyWeaklyProtected: 'unknown' }),
      'Set (stored, encrypted). On Linux the kiosk cannot tell whether a keyring or a built-in key protects it; on a shared machine prefer AVATAR_API_KEY.',
    );
  });
});

describe('the Diagnostics tab: the wire report', () => {
  it('records through main and shows the findings in four lines; a locked panel gets the error', async () => {
    const { wireReportFacts } = await import('../../../renderer/src/staff/wire-report.svelte.ts');
    type WireReportView = import('../../../renderer/src/staff/wire-report.svelte.ts').WireReportView;
    const { panel, fake } = setup();
    assert.deepEqual(panel.wireReport.view, { status: 'idle' });
    await panel.wireReport.run();
    assert.deepEqual(panel.wireReport.view, { status: 'error', message: 'The staff panel is locked.' });
    fake.unlocked = true;
    await panel.wireReport.run();
    const view = panel.wireReport.view as WireReportView;
    assert.ok(view.status === 'done');
    assert.equal(view.result.savedTo, '/data/wire-report.json');
    assert.deepEqual(wireReportFacts(view.result.report), [
      { id: 'ping', label: 'Ping', value: 'JSON messages, type 3, every 5000 ms' },
      { id: 'ack', label: 'Ack', value: 'Not seen (this check never starts billing)' },
      { id: 'http', label: 'HTTP answers', value: 'GET /lives/{live_id} 404 (json); POST /lives 201 (json); GET /voices 401 (html)' },
      { id: 'closes', label: 'Socket closes', value: '1000 by the client' },
    ]);
    assert.deepEqual(fake.calls.filter((c) => c === 'wireReport'), ['wireReport', 'wireReport']);
  });
});
