/**
 * The staff panel's API as staff-ops answers it (the dispatcher's PIN check is not part of this): what the
 * panel shows, which errors a person reads, which requests reach the service, what the operator's log
 * says. A fake kiosk service and fake services, so each answer is exact.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ok, type Result, type StaffStatus } from '../../../electron/contract.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { SessionRecord } from '../../../electron/operations/ledger.ts';
import { rejection } from '../../helpers/rejection.ts';
import { autoClosingTransports, staffOpsWorld } from '../../helpers/staff-ops-api-world.ts';
import { AVATAR_VOLUME_FILE } from '../../../electron/kiosk/avatar-volume.ts';

const value = <T>(r: Result<T>): T => {
  assert.ok(r.ok, JSON.stringify(r));
  return r.value;
};

const errorsShown = async (w: Awaited<ReturnType<typeof staffOpsWorld>>) =>
  (value(await w.staff.status()) as StaffStatus).errors.map((e) => [e.code, e.message]);

describe('staff API: voices', () => {
  it('lists the built-in voice and each custom voice once, without empty names or built-in ones', async () => {
    const w = await staffOpsWorld({ voices: ['Maya', '', 'Tina', 'Maya', 'Noor'] });
    assert.deepEqual(value(await w.staff.listVoices()), { builtIn: ['Tina'], custom: ['Maya', 'Noor'], current: 'Tina' });
  });

  it('without a service client, listing and cloning say the service is not configured', async () => {
    const w = await staffOpsWorld({ target: null });
    const listed = await rejection(w.staff.listVoices());
    assert.deepEqual([listed.code, listed.message], ['invalid_config', 'The avatar service is not configured, so custom voices cannot be listed.']);
    const cloned = await rejection(Promise.resolve().then(() => w.staff.cloneVoice({ audioUrl: 'https://x.example/a.mp3', voice: 'Maya' })));
    assert.deepEqual([cloned.code, cloned.message], ['invalid_config', 'The avatar service is not configured, so a voice cannot be cloned.']);
  });

  it('cloning sends the language only when given, and logs the credit warning with the voice', async () => {
    const w = await staffOpsWorld();
    const bodies: unknown[] = [];
    const clone = w.client!.cloneVoice.bind(w.client);
    w.client!.cloneVoice = (req) => (bodies.push(req), clone(req));
    assert.deepEqual(await w.staff.cloneVoice({ audioUrl: 'https://x.example/a.mp3', voice: 'Maya', language: 'fr' }), ok({ voice: 'Maya' }));
    assert.deepEqual(await w.staff.cloneVoice({ audioUrl: 'https://x.example/b.mp3', voice: 'Noor' }), ok({ voice: 'Noor' }));
    assert.deepEqual(bodies, [
      { audio_url: 'https://x.example/a.mp3', voice: 'Maya', language: 'fr' },
      { audio_url: 'https://x.example/b.mp3', voice: 'Noor' },
    ]);
    assert.deepEqual(
      w.logger.lines.filter((l) => l.message.startsWith('Cloning')).map((l) => [l.level, l.message, l.data]),
      [
        ['info', 'Cloning a voice (may cost 899 credits after the first 10 clones)', { voice: 'Maya' }],
        ['info', 'Cloning a voice (may cost 899 credits after the first 10 clones)', { voice: 'Noor' }],
      ],
    );
  });
});

describe('staff API: API key', () => {
  it("a refused key is answered as the service refused it; an accepted one returns the panel's settings", async () => {
    const refused: Result<never> = { ok: false, error: { code: 'invalid_request', message: 'Key refused.' } };
    const w = await staffOpsWorld({ setApiKeyResult: refused as never });
    assert.deepEqual(await w.staff.setApiKey({ apiKey: 'k-1' }), refused);
    const w2 = await staffOpsWorld();
    const r = value(await w2.staff.setApiKey({ apiKey: 'k-2' }));
    assert.deepEqual([r.hasApiKey, r.apiKeySource, r.settings.avatar.persona], [true, 'stored', 'A test persona.']);
    assert.deepEqual(w2.apiKeyCalls, [{ apiKey: 'k-2' }]);
  });
});

describe('staff API: diagnostics', () => {
  it('refuses the doctor and the network check during a call', async () => {
    const w = await staffOpsWorld({ running: true });
    const doctor = await rejection(Promise.resolve().then(() => w.staff.runDoctor()));
    assert.deepEqual([doctor.code, doctor.message], ['invalid_request', 'Diagnostics cannot run during a call.']);
    const check = await rejection(Promise.resolve().then(() => w.staff.networkCheckStart()));
    assert.deepEqual([check.code, check.message], ['invalid_request', 'The video network cannot be checked during a call.']);
    assert.deepEqual(w.requests, [], 'no test session was created');
  });

  it("failed doctor checks show in Status as doctor_<check>; passed and unchecked ones do not", async () => {
    const w = await staffOpsWorld({ target: null, configError: new AvatarError('invalid_config', 'config.json is broken.') });
    const report = value(await w.staff.runDoctor());
    assert.deepEqual(report.checks.map((c) => [c.id, c.ok]).slice(0, 3), [
      ['config', false],
      ['key', null],
      ['service', false],
    ]);
    assert.equal(report.checks[0]!.message, 'config.json is broken. The kiosk runs on safe defaults until it is fixed.');
    assert.deepEqual(await errorsShown(w), [
      ['doctor_config', 'config.json is broken. The kiosk runs on safe defaults until it is fixed.'],
      ['doctor_service', 'The avatar service is not configured.'],
    ]);
  });

  it('the doctor hangs its test session up through the control sockets of the service it uses', async () => {
    const w = await staffOpsWorld();
    const report = value(await w.staff.runDoctor());
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.deepEqual(w.serviceTransports.all.map((t) => [t.url, t.frames().map((f) => f.type)]), [['wss://gw.example/api/ws?live_id=check-1', [5]]]);
    assert.deepEqual(await errorsShown(w), []);
  });

  it('the doctor uses the transport factory staff-ops was given over the service one', async () => {
    const mine = autoClosingTransports();
    const w = await staffOpsWorld({ opsTransports: mine });
    value(await w.staff.runDoctor());
    assert.equal(mine.all.length, 1);
    assert.equal(w.serviceTransports.all.length, 0);
  });

  it('the network check closes its test session through the service sockets; a failed one shows in Status', async () => {
    const w = await staffOpsWorld();
    const ticket = value(await w.staff.networkCheckStart());
    assert.equal(ticket.checkId, 'check-1');
    const good = value(await w.staff.networkCheckFinish({ checkId: ticket.checkId, outcome: { ok: true, message: 'Joined in 300 ms.', joinMs: 300 } as never }));
    assert.equal(good.ok, true);
    assert.deepEqual(w.serviceTransports.all.map((t) => t.frames().map((f) => f.type)), [[5]]);
    assert.deepEqual(await errorsShown(w), []);
    const again = value(await w.staff.networkCheckStart());
    const bad = value(await w.staff.networkCheckFinish({ checkId: again.checkId, outcome: { ok: false, message: 'Could not join the channel.' } as never }));
    assert.equal(bad.ok, false);
    assert.deepEqual(await errorsShown(w), [['network_check', 'Could not join the channel.']]);
  });

  it('an unanswered network check is closed at its timeout on the kiosk clock', async () => {
    const w = await staffOpsWorld();
    value(await w.staff.networkCheckStart());
    await w.clock.advance(30_000);
    assert.deepEqual(w.serviceTransports.all.map((t) => t.frames().map((f) => f.type)), [[5]]);
    assert.ok(w.logger.lines.some((l) => l.message === 'Network check: no result from the screen in time; closing the test session'));
  });
});

describe('staff API: ledger export', () => {
  async function withRecords() {
    const w = await staffOpsWorld();
    const rec = (liveId: string, endAt: Date): SessionRecord =>
      ({
        kind: 'session',
        v: 1,
        start_at: endAt.toISOString(),
        live_at: null,
        end_at: endAt.toISOString(),
        live_id: liveId,
        surface: 'gateway',
        call_mode: 'audio',
        time_to_live_ms: null,
        not_ready_retries: 0,
        reconnects: 0,
        end_reason: 'visitor',
        ended_by: 'client',
        billed_seconds: 10,
        credits_cost: 15,
        recovered: false,
      }) as SessionRecord;
    await w.ops.ledger.append(rec('old-call', new Date(2026, 0, 4, 18)));
    await w.ops.ledger.append(rec('new-call', new Date(2026, 0, 5, 9)));
    return w;
  }

  it('names the file after the first day and today (zero-padded), and keeps the records from that day on', async () => {
    const w = await withRecords();
    const r = value(await w.staff.ledgerCsv({ since: '2026-01-05' }));
    assert.equal(r.fileName, 'avatar-kiosk-ledger-2026-01-05-to-2026-02-03.csv');
    assert.ok(r.csv.includes('new-call') && !r.csv.includes('old-call'), r.csv);
  });

  it('without a first day: every record, the file named after today only', async () => {
    const w = await withRecords();
    const r = value(await w.staff.ledgerCsv({}));
    assert.equal(r.fileName, 'avatar-kiosk-ledger-2026-02-03.csv');
    assert.ok(r.csv.includes('new-call') && r.csv.includes('old-call'), r.csv);
  });

  it('a first day that is not a date is refused with the text it got', async () => {
    const w = await withRecords();
    const e = await rejection(Promise.resolve().then(() => w.staff.ledgerCsv({ since: 'yesterday' })));
    assert.deepEqual([e.code, e.message], ['invalid_request', 'Not a date: yesterday.']);
  });
});

describe('staff API: platform', () => {
  it('start-at-login where the system has none is refused and not attempted', async () => {
    const w = await staffOpsWorld({ openAtLogin: null });
    const e = await rejection(Promise.resolve().then(() => w.staff.setOpenAtLogin({ enabled: true })));
    assert.deepEqual([e.code, e.message], ['invalid_request', 'Starting at login is not supported on this system.']);
    assert.deepEqual(w.platformCalls, []);
  });

  it('exit and restart are logged, lock the panel and reach the platform', async () => {
    for (const [channel, call, line] of [
      ['exitKiosk', 'exit', 'Staff: exit to the desktop'],
      ['restart', 'restart', 'Staff: restart'],
    ] as const) {
      const w = await staffOpsWorld();
      await w.staff.setPin({ pin: '246813' });
      assert.equal(w.ops.pin.state().unlocked, true);
      assert.deepEqual(await w.staff[channel](), ok(undefined));
      assert.deepEqual(w.platformCalls, [call]);
      assert.equal(w.ops.pin.state().unlocked, false, `${channel} locks the panel`);
      assert.deepEqual(w.logger.lines.filter((l) => l.message.startsWith('Staff:')).map((l) => [l.level, l.message]), [['info', line]]);
    }
  });
});

describe('app API: renderer errors', () => {
  it('logs the message, source and first 4000 characters of the stack, and shows the message in Status', async () => {
    const w = await staffOpsWorld();
    const stack = 'x'.repeat(5000);
    assert.deepEqual(await w.app.reportError({ message: 'TypeError: a', source: 'window.onerror', stack }), ok(undefined));
    assert.deepEqual(await w.app.reportError({ message: 'TypeError: b' }), ok(undefined));
    assert.deepEqual(
      w.logger.lines.filter((l) => l.message === 'Renderer error').map((l) => [l.level, l.data]),
      [
        ['error', { message: 'TypeError: a', source: 'window.onerror', stack: 'x'.repeat(4000) }],
        ['error', { message: 'TypeError: b', source: null, stack: null }],
      ],
    );
    assert.deepEqual(await errorsShown(w), [
      ['renderer', 'TypeError: a'],
      ['renderer', 'TypeError: b'],
    ]);
  });
});

describe('staff API: the avatar volume', () => {
  it('sets it, keeps it in the data folder, logs it, and the Status tab shows it; the page hears it from the service', async () => {
    const w = await staffOpsWorld();
    const heard: number[] = [];
    w.kiosk.avatarVolume.onChange((percent) => heard.push(percent));
    assert.equal((value(await w.staff.status()) as StaffStatus).avatarVolume, 100);
    assert.deepEqual(await w.staff.setAvatarVolume({ percent: 40 }), ok({ percent: 40 }));
    assert.equal((value(await w.staff.status()) as StaffStatus).avatarVolume, 40);
    assert.deepEqual(JSON.parse(readFileSync(join(w.dataDir, AVATAR_VOLUME_FILE), 'utf8')), { v: 1, percent: 40 });
    assert.deepEqual(heard, [40]);
    assert.deepEqual(w.logger.lines.filter((l) => l.message === 'Staff: avatar volume'), [{ level: 'info', message: 'Staff: avatar volume', data: { percent: 40 } }]);
  });
});
