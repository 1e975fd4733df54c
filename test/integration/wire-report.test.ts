/**
 * The wire report against the emulator in every fair reading: `cli probe --wire-report FILE` (in-process, on
 * the emulator's fake clock) and the staff panel's service check (`runWireCheck`). Each report must show
 * what the reading changed — the ping's format, type and period, the ack's type and nesting, create's
 * status, timestamp kinds, extra fields, the strict server's close code, error body shapes — and must hold
 * none of the secrets: the API key, the RTC token, the live id, the RTC channel and user ids, the persona.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeClock } from '../helpers/fake-clock.ts';
import { KEEP_ALIVE_REFUSAL_WINDOW_MS, KeepAlive } from '../../electron/core/keep-alive.ts';
import { createLogger } from '../../electron/core/log.ts';
import { ServiceClient } from '../../electron/core/rest-client.ts';
import type { WireReport } from '../../electron/core/wire-report.ts';
import type { EmulatorHandle, EmulatorKnobs } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { ACK_NOT_SEEN, WIRE_REPORT_FILE, runWireCheck } from '../../electron/operations/wire-check.ts';
import { ERROR_BODY_READINGS, HELD_READINGS, PERSONA, TINY_PNG, emulatorFor, probe, type Reading } from '../helpers/fair-readings.ts';
import { tempDirsRemovedAfterEach } from '../helpers/temp-dirs.ts';
import { driveUntilSettled } from '../helpers/until.ts';

const tempDir = tempDirsRemovedAfterEach('wire-report-');
let open: { clock: FakeClock; emu: EmulatorHandle } | null = null;
const realFetch = globalThis.fetch;

afterEach(async () => {
  globalThis.fetch = realFetch;
  const o = open;
  open = null;
  if (!o) return;
  await o.emu.close();
  assert.equal(o.clock.pendingCount, 0, `timers left: ${o.clock.pendingDelays().join(', ')}`);
});

/** Every value of the create answers that passes through this process (the RTC credentials among them). */
function spyOnCreates(): Array<Record<string, Record<string, string>>> {
  const created: Array<Record<string, Record<string, string>>> = [];
  globalThis.fetch = async (input, init) => {
    const res = await realFetch(input, init);
    if (init?.method === 'POST' && String(input instanceof Request ? input.url : input).endsWith('/lives') && res.ok) {
      created.push((await res.clone().json()) as Record<string, Record<string, string>>);
    }
    return res;
  };
  return created;
}

/** The report's text holds none of the secrets (checked on the raw file, any field, any nesting). */
function assertNoSecret(text: string, emu: EmulatorHandle, created: ReadonlyArray<Record<string, Record<string, string>>>): void {
  assert.ok(created.length >= 1, 'the create answer was seen');
  const secrets: Array<[string, string]> = [
    ['the API key', emu.apiKey],
    ['the persona', PERSONA],
    ['a piece of the persona', 'tide tables'],
  ];
  for (const c of created) {
    secrets.push(['the live id', c.live!.id!], ['the RTC token', c.rtc!.token!], ['the RTC channel id', c.rtc!.channel_id!], ['the RTC user id', c.rtc!.user_id!], ['the RTC app id', c.rtc!.app_id!]);
  }
  for (const [what, value] of secrets) assert.equal(text.includes(value), false, `the report shows ${what}`);
}

async function probeReport(knobs: Partial<EmulatorKnobs>): Promise<{ report: WireReport; text: string; code: number; stderr: string }> {
  open = await emulatorFor(knobs);
  const { clock, emu } = open;
  const created = spyOnCreates();
  const file = join(tempDir(), 'report.json');
  const run = probe(emu, clock, { wireReport: file, holdSeconds: 1 });
  const code = await driveUntilSettled(clock, run.done, { stepMs: 250, maxFakeMs: 120_000 });
  const text = readFileSync(file, 'utf8');
  assertNoSecret(text, emu, created);
  return { report: JSON.parse(text) as WireReport, text, code, stderr: run.stderr() };
}

const ERROR_SHAPES: Record<EmulatorKnobs['errorBody'], { body: string; shape?: unknown }> = {
  nested: { body: 'json', shape: { error: { code: 'string = not_found', message: 'string' } } },
  flat: { body: 'json', shape: { code: 'string = not_found', message: 'string' } },
  detail: { body: 'json', shape: { detail: 'string' } },
  html: { body: 'html' },
  empty: { body: 'empty' },
};

describe('cli probe --wire-report: one short billed call per reading, no secret in the file', () => {
  for (const reading of HELD_READINGS) {
    it(reading.name, async () => {
      const { report, code, stderr } = await probeReport(reading.knobs);
      assert.equal(code, 0, stderr);
      assert.equal(stderr.split('\n')[0], 'probe: this is a billed call: about 3 credits (about 2 s live at 3 credits per 2 s); the control socket is first watched for 11 s before conn_init, which is not billed');
      assertFindings(report, reading);
    });
  }

  for (const shape of ERROR_BODY_READINGS) {
    it(`error bodies: ${shape}`, async () => {
      const { report, code } = await probeReport({ errorBody: shape });
      assert.equal(code, 0);
      const errors = report.http.filter((h) => h.status >= 400).map(({ endpoint, status, body, shape: s }) => ({ endpoint, status, body, ...(s ? { shape: s } : {}) }));
      const expected = ERROR_SHAPES[shape];
      const unauthorized = expected.shape ? { shape: JSON.parse(JSON.stringify(expected.shape).replace('not_found', 'unauthorized')) as unknown } : {};
      assert.deepEqual(errors, [
        { endpoint: 'GET /lives/{live_id}', status: 404, body: expected.body, ...(expected.shape ? { shape: expected.shape } : {}) },
        { endpoint: 'GET /voices', status: 401, body: expected.body, ...unauthorized },
      ]);
    });
  }
});

/** What the report must show for `reading` (the parts the reading changes, exactly). */
function assertFindings(report: WireReport, reading: Reading): void {
  const k = reading.knobs;
  const strict = k.strictCloseCode !== undefined;
  assert.deepEqual([report.source, report.surface, report.not_seen], ['cli-probe', 'direct', []]);
  // The ping: format, type, period (measured on fake time: exact).
  const ping = report.socket.ping;
  const format = k.pingFormat ?? 'json';
  if (format === 'none') {
    assert.deepEqual([ping.format, ping.count, ping.period_ms], ['none-seen', 0, null]);
    assert.ok(report.socket.client_sent.ping_frames >= 1, 'a silent server was probed with WebSocket pings');
    assert.equal(report.socket.control_frames.pong, report.socket.client_sent.ping_frames, 'and answered each');
  } else {
    const type = format === 'ws-frames' ? null : format === 'json-named' ? 'ping' : format === 'json-other-type' ? 9 : 3;
    assert.deepEqual([ping.format, ping.type], [format === 'ws-frames' ? 'ws-frames' : 'json', type]);
    // A strict server closes the watched socket at our first keep-alive (5 s): no connection lives for two pings.
    assert.equal(ping.period_ms?.median ?? null, strict ? null : 5_000);
    if (format === 'json') {
      const payload = { ping: { ts: 'number (integer)' }, ...(k.extraFields ? { meta: { node: 'string' } } : {}) };
      assert.deepEqual(ping.shape, { type: 'number = 3', payload, ...(k.extraFields ? { trace_id: 'string', flags: ['string'] } : {}) });
    }
  }
  // The ack: its type and where `success` sat.
  const ackPath = { nested: 'payload.conn_init_ack', flat: 'payload', echo: 'payload.conn_init', top: '(top level)' }[k.ackShape ?? 'nested'];
  assert.deepEqual([report.socket.ack?.type, report.socket.ack?.path], [k.ackType ?? 2, ackPath]);
  // create's status, and the timestamps' kind in the query answer.
  const create = report.http.filter((h) => h.endpoint === 'POST /lives');
  assert.deepEqual(create.map((h) => h.status), [k.createStatus ?? 200]);
  const queries = report.http.filter((h) => h.endpoint === 'GET /lives/{live_id}' && h.status === 200);
  const statuses = queries.map((q) => (q.shape as { live: Record<string, unknown> }).live.status);
  // A 20 s `ending` is read until `ended`; otherwise the first read already says `ended`.
  assert.deepEqual(statuses, k.endingMs ? ['string = ending', 'string = ended'] : ['string = ended']);
  const query = queries.at(-1)!;
  const live = (query.shape as { live: Record<string, unknown> }).live;
  assert.equal(live.created_at, k.timestamps === 'number' ? 'number (integer)' : 'string (digits)');
  assert.equal((create[0]!.shape as { rtc: Record<string, unknown> }).rtc.token_expire_at, k.timestamps === 'number' ? 'number (integer)' : 'string (digits)');
  assert.equal(live.status, 'string = ended');
  // Ids are kinds, never values (an emulator id of hex digits that happen to be all decimal says "digits").
  assert.match(String(live.id), /^string( \(digits\))?$/, 'ids are kinds, never values');
  if (k.extraFields) {
    assert.deepEqual([live.region, live.labels, (query.shape as Record<string, unknown>).server_version], ['string', {}, 'string']);
  }
  // The strict server: its close code, right after our keep-alive (the type-4 pong), before the call went live.
  const closes = report.socket.closes.map((c) => `${c.code} by ${c.by}`);
  assert.deepEqual(closes, [...(strict ? [`${k.strictCloseCode} by server`] : []), '1000 by client']);
  if (strict) {
    // At once on the service's side; the fake clock moves on a few 250 ms drive steps while the close crosses
    // a loaded machine's loopback, and the client took it as a refusal, so it came inside the refusal window.
    assert.ok(report.socket.closes[0]!.after_client_message_ms! <= KEEP_ALIVE_REFUSAL_WINDOW_MS, JSON.stringify(report.socket.closes[0]));
    // Our keep-alive at 5 s; with a JSON ping due at the same fake moment, the answer to it may leave too
    // before the close arrives (which of the two timers fires first depends on when each socket opened).
    const pongs = report.socket.client_sent.messages['4'];
    if (format === 'ws-frames') assert.equal(pongs, 1, 'our pong message, refused');
    else assert.ok(pongs === 1 || pongs === 2, `our pong message, refused (${pongs})`);
  }
}

describe('the staff panel’s service check, recorded: nothing billed, no secret', () => {
  const cases: Array<[string, Partial<EmulatorKnobs>, (r: WireReport) => void]> = [
    ['the default reading', {}, (r) => assert.deepEqual([r.socket.ping.format, r.socket.ping.type, r.socket.ping.period_ms?.median], ['json', 3, 5_000])],
    ['WebSocket ping frames only', { pingFormat: 'ws-frames' }, (r) => assert.deepEqual([r.socket.ping.format, r.socket.ping.period_ms?.median], ['ws-frames', 5_000])],
    ['no ping, HTML errors', { pingFormat: 'none', errorBody: 'html' }, (r) => assert.deepEqual([r.socket.ping.format, r.http.filter((h) => h.status >= 400).map((h) => h.body)], ['none-seen', ['html', 'html']])],
    [
      'a strict server (the kiosk already knows to echo its ping)',
      { strictCloseCode: 4400 },
      (r) => assert.deepEqual([r.socket.closes.map((c) => c.code), Object.keys(r.socket.client_sent.messages).sort()], [[1000], ['3', '5']]),
    ],
  ];
  for (const [what, knobs, check] of cases) {
    it(what, async () => {
      open = await emulatorFor(knobs);
      const { clock, emu } = open;
      const created = spyOnCreates();
      const dataDir = tempDir();
      const keepAlive = new KeepAlive();
      if (knobs.strictCloseCode) {
        keepAlive.notePing({ type: 3, payload: { ping: { ts: 0 } } });
        keepAlive.refused('pong-message', knobs.strictCloseCode);
      }
      const config = resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: PERSONA, name: 'Ada' } }, {});
      const client = new ServiceClient({ target: { surface: 'direct', baseUrl: emu.baseUrl, apiKey: emu.apiKey }, clock });
      const result = await driveUntilSettled(clock, runWireCheck({ client, config, dataDir, keepAlive, clock, logger: createLogger({ level: 'error', sink: () => {} }) }), { stepMs: 250 });
      assert.deepEqual([result.ok, result.message], [true, 'Recorded: a test session was created, watched without going live, and closed; nothing was billed.']);
      assert.equal(result.savedTo, join(dataDir, WIRE_REPORT_FILE));
      const text = readFileSync(result.savedTo, 'utf8');
      assert.deepEqual(JSON.parse(text), result.report);
      assertNoSecret(text, emu, created);
      const r = result.report;
      assert.deepEqual([r.source, r.socket.ack, r.not_seen], ['service-check', null, [ACK_NOT_SEEN]]);
      assert.equal(r.socket.client_sent.messages['1'], undefined, 'never a conn_init');
      const session = emu.getSession(emu.listSessions()[0]!.id)!;
      assert.deepEqual([session.status, session.connInits, session.billedSeconds, session.creditsCost], ['ended', 0, 0, 0]);
      check(r);
    });
  }
});
