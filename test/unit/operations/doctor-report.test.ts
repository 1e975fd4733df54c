/**
 * The doctor's report, in-process (the CLI runs it in a child process): each check's exact line for every
 * way the test session can go — fine, hang-up not delivered, end not confirmed, billed, refused key, no
 * credits, invalid avatar, unreachable — and the probe figures, on a FakeClock with a scripted service and
 * in-memory sockets, so the poll times and the elapsed time are exact.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { LiveRecord } from '../../../electron/core/protocol.ts';
import { END_CONFIRM_TIMEOUT_MS } from '../../../electron/core/remote-hangup.ts';
import type { ServiceClient } from '../../../electron/core/rest-client.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { runDoctor, type DoctorInput } from '../../../electron/operations/doctor.ts';
import { autoAnsweringTransports } from '../../helpers/fake-transport.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { driveUntilSettled } from '../../helpers/until.ts';

const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const LIVE_ID = 'live-doc-1';
const T0 = 1_700_000_000_000;
const config = resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } }, {});

const CONFIG_OK = { id: 'config', ok: true, message: 'The configuration is valid.' };
const KEY_OK = { id: 'key', ok: true, message: 'The service accepted the API key.' };
const MICROPHONE = { id: 'microphone', ok: null, message: 'Checked on the kiosk screen (Diagnostics).' };
const CAMERA = { id: 'camera', ok: null, message: 'Checked on the kiosk screen (Diagnostics).' };

/** A query answer with only the fields given (as the service may send them). */
const record = (fields: Partial<LiveRecord>) => ({ id: LIVE_ID, ...fields }) as LiveRecord;
const waiting = record({ status: 'waiting' });
const ended = (fields: Partial<LiveRecord> = {}) => record({ status: 'ended', billed_seconds: 0, credits_cost: 0, ...fields });

/**
 * A scripted service: `create` answers the create call (or throws), `answers` are the query answers in
 * order (the last one repeats; an error is thrown). Its socket URL points at a closed port, so a doctor
 * that did not use the injected transports could not deliver the hang-up.
 */
function scriptedService(clock: FakeClock, script: { createError?: unknown; answers?: Array<LiveRecord | AvatarError> } = {}) {
  const answers = [...(script.answers ?? [ended()])];
  const created: unknown[] = [];
  const queriedAt: number[] = [];
  const client = {
    async createSession(request: unknown) {
      created.push(request);
      if (script.createError !== undefined) throw script.createError;
      return {
        live: { id: LIVE_ID, status: 'waiting', live_duration: 300, call_mode: 'audio' },
        rtc: { app_id: 'app', channel_id: `ch-${LIVE_ID}`, user_id: 'u1', token: 'tok', token_expire_at: '1700000300' },
      };
    },
    async querySession(liveId: string) {
      assert.equal(liveId, LIVE_ID);
      queriedAt.push(clock.now() - T0);
      const next = answers.length > 1 ? answers.shift()! : answers[0]!;
      if (next instanceof Error) throw next;
      return next;
    },
    socketRequest(liveId: string) {
      return { url: `ws://127.0.0.1:1/live/ws?live_id=${liveId}`, headers: { Authorization: 'Token k' } };
    },
  } as unknown as ServiceClient;
  return { client, created, queriedAt };
}

async function doctor(
  input: Partial<DoctorInput> = {},
  script: Parameters<typeof scriptedService>[1] = {},
  socket: 'open' | 'refuse' = 'open',
) {
  const clock = new FakeClock(T0);
  const logger = recordingLogger();
  const service = scriptedService(clock, script);
  const { transports, factory } = autoAnsweringTransports(socket);
  const result = await driveUntilSettled(
    clock,
    runDoctor({ mode: 'direct', config, configError: null, client: service.client, clock, logger, transportFactory: factory, ...input }),
    { stepMs: 250 },
  );
  const warnings = logger.lines.filter((l) => l.level === 'warn');
  return { result, service, transports, logger, warnings };
}

describe('runDoctor: a test session that goes as it should', () => {
  it('creates it, hangs it up with type 5 only, polls every 250 ms on the clock until ended, and reports all fine', async () => {
    const { result, service, transports, warnings } = await doctor({}, { answers: [waiting, ended()] });
    assert.deepEqual(result, {
      ok: true,
      checks: [
        CONFIG_OK,
        KEY_OK,
        { id: 'service', ok: true, message: 'The service is reachable: a test session was created and closed in 250 ms, nothing billed.' },
        MICROPHONE,
        CAMERA,
      ],
      probe: { liveId: LIVE_ID, billedSeconds: 0, creditsCost: 0, elapsedMs: 250 },
    });
    assert.equal(service.created.length, 1);
    assert.deepEqual(service.queriedAt, [0, 250], 'polled on the injected clock, every 250 ms');
    assert.equal(transports.all.length, 1, 'the hang-up went through the injected transport');
    assert.deepEqual(transports.last.frames().map((f) => f.type), [5]);
    assert.deepEqual(warnings, []);
  });

  it('a final record without billing fields reports them as null (unknown), not as a number', async () => {
    const { result } = await doctor({}, { answers: [record({ status: 'ended' })] });
    assert.equal(result.ok, true);
    assert.deepEqual(result.probe, { liveId: LIVE_ID, billedSeconds: null, creditsCost: null, elapsedMs: 0 });
    assert.deepEqual(result.checks[2], { id: 'service', ok: true, message: 'The service is reachable: a test session was created and closed in 0 ms, nothing billed.' });
  });

  it('the key line depends on the surface: demo has no key, the gateway holds it', async () => {
    const demo = await doctor({ mode: 'demo' });
    assert.deepEqual(demo.result.checks[1], { id: 'key', ok: null, message: 'No API key: demo mode, on the built-in emulator.' });
    assert.equal(demo.result.ok, true);
    const gateway = await doctor({ mode: 'gateway' });
    assert.deepEqual(gateway.result.checks[1], { id: 'key', ok: null, message: 'Gateway surface: the gateway holds the key.' });
    assert.equal(gateway.result.ok, true);
  });
});

describe('runDoctor: configuration and client problems', () => {
  it('an invalid configuration fails the config check and the report, while the service is still checked', async () => {
    const { result } = await doctor({ configError: new AvatarError('invalid_config', 'config.json: callMode must be "audio" or "video".') });
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks, [
      { id: 'config', ok: false, message: 'config.json: callMode must be "audio" or "video". The kiosk runs on safe defaults until it is fixed.' },
      KEY_OK,
      { id: 'service', ok: true, message: 'The service is reachable: a test session was created and closed in 0 ms, nothing billed.' },
      MICROPHONE,
      CAMERA,
    ]);
  });

  it('no client and no reason: the service is "not configured" and the key is not checked', async () => {
    const { result, service } = await doctor({ client: null });
    assert.deepEqual(result, {
      ok: false,
      checks: [
        CONFIG_OK,
        { id: 'key', ok: null, message: 'Not checked: the service is not configured.' },
        { id: 'service', ok: false, message: 'The avatar service is not configured.' },
        MICROPHONE,
        CAMERA,
      ],
      probe: null,
    });
    assert.equal(service.created.length, 0);
  });

  it('no client, with the reason it could not be built: that reason is the service line', async () => {
    const { result } = await doctor({ client: null, clientError: new AvatarError('invalid_config', 'The service URL is not a valid https URL.') });
    assert.deepEqual(result.checks.slice(1, 3), [
      { id: 'key', ok: null, message: 'Not checked: the service is not configured.' },
      { id: 'service', ok: false, message: 'The service URL is not a valid https URL.' },
    ]);
    assert.equal(result.ok, false);
  });
});

describe('runDoctor: a test session that does not end cleanly', () => {
  it('the hang-up cannot be delivered: says the service will close it itself', async () => {
    const { result, transports } = await doctor({}, { answers: [ended()] }, 'refuse');
    assert.deepEqual(transports.last.sent, []);
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks.slice(1, 3), [
      KEY_OK,
      { id: 'service', ok: false, message: `A test session was created (${LIVE_ID}) but the hang-up could not be delivered; the service will close it itself.` },
    ]);
    assert.deepEqual(result.probe, { liveId: LIVE_ID, billedSeconds: 0, creditsCost: 0, elapsedMs: 0 });
  });

  it('the service never says ended: gives up after 30 s (END_CONFIRM_TIMEOUT_MS) of polling every 250 ms', async () => {
    const { result, service } = await doctor({}, { answers: [waiting] });
    assert.deepEqual(service.queriedAt, Array.from({ length: END_CONFIRM_TIMEOUT_MS / 250 + 1 }, (_, i) => i * 250));
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks[2], { id: 'service', ok: false, message: `The test session ${LIVE_ID} was hung up but the service did not confirm its end in time.` });
    assert.deepEqual(result.probe, { liveId: LIVE_ID, billedSeconds: null, creditsCost: null, elapsedMs: END_CONFIRM_TIMEOUT_MS });
  });

  it('no record could be read at all: end not confirmed, billing unknown', async () => {
    const { result, warnings } = await doctor({}, { answers: [new AvatarError('server', 'HTTP 503')] });
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks[2], { id: 'service', ok: false, message: `The test session ${LIVE_ID} was hung up but the service did not confirm its end in time.` });
    assert.deepEqual(result.probe, { liveId: LIVE_ID, billedSeconds: null, creditsCost: null, elapsedMs: END_CONFIRM_TIMEOUT_MS });
    assert.ok(warnings.every((w) => w.message === 'remote hangup: query failed'), 'the doctor itself did not fail');
  });

  it('billed seconds alone fail the service check', async () => {
    const { result } = await doctor({}, { answers: [ended({ billed_seconds: 3, credits_cost: 0 })] });
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks[2], { id: 'service', ok: false, message: 'The test session was billed (3 s, 0 credits) although it never went live.' });
    assert.deepEqual(result.probe, { liveId: LIVE_ID, billedSeconds: 3, creditsCost: 0, elapsedMs: 0 });
  });

  it('credits alone fail the service check, even with the billed seconds unknown', async () => {
    const { result } = await doctor({}, { answers: [ended({ billed_seconds: null, credits_cost: 2 })] });
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks[2], { id: 'service', ok: false, message: 'The test session was billed (null s, 2 credits) although it never went live.' });
    assert.deepEqual(result.probe, { liveId: LIVE_ID, billedSeconds: null, creditsCost: 2, elapsedMs: 0 });
  });
});

describe('runDoctor: the test session cannot be created', () => {
  async function refused(error: unknown, mode: DoctorInput['mode'] = 'direct') {
    const run = await doctor({ mode }, { createError: error });
    assert.equal(run.result.probe, null);
    assert.deepEqual(run.result.checks[0], CONFIG_OK);
    assert.deepEqual(run.result.checks.slice(3), [MICROPHONE, CAMERA]);
    return run;
  }

  it('HTTP 401: the key is refused, the service is reachable, and the operator log says why', async () => {
    const { result, warnings } = await refused(new AvatarError('unauthorized', 'Invalid token.', { status: 401 }));
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks.slice(1, 3), [
      { id: 'key', ok: false, message: 'The service refused the API key (HTTP 401). Enter the key again in Settings.' },
      { id: 'service', ok: true, message: 'The service is reachable (it answered, refusing the key).' },
    ]);
    assert.deepEqual(warnings, [{ level: 'warn', message: 'Doctor: the test session failed', data: { code: 'unauthorized', message: 'Invalid token.' } }]);
  });

  it('not enough credits: the key is fine for the surface, the service line says to top up', async () => {
    const noCredits = new AvatarError('insufficient_credits', 'Balance too low.', { status: 402 });
    const direct = await refused(noCredits);
    assert.equal(direct.result.ok, false);
    assert.deepEqual(direct.result.checks.slice(1, 3), [
      KEY_OK,
      { id: 'service', ok: false, message: 'The service is reachable but the balance is under 45 credits: calls cannot start. Top up the account.' },
    ]);
    const gateway = await refused(noCredits, 'gateway');
    assert.deepEqual(gateway.result.checks[1], { id: 'key', ok: null, message: 'Gateway surface: the gateway holds the key.' });
  });

  it('the service refuses an avatar field: the avatar settings are invalid, the key not checked', async () => {
    const { result } = await refused(new AvatarError('invalid_request', 'The image is too large.', { status: 400, details: { field: 'avatar.image_uri' } }));
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks.slice(1, 3), [
      { id: 'key', ok: null, message: 'Not checked: the avatar settings are invalid.' },
      { id: 'service', ok: false, message: 'The avatar settings are invalid: The image is too large.' },
    ]);
  });

  it('an empty persona in the settings is caught before the service is called, as an avatar problem', async () => {
    const clock = new FakeClock(T0);
    const service = scriptedService(clock);
    const result = await runDoctor({ mode: 'direct', config: { ...config, avatar: { ...config.avatar, persona: '  ' } }, configError: null, client: service.client, clock });
    assert.equal(service.created.length, 0);
    assert.equal(result.checks[1]!.message, 'Not checked: the avatar settings are invalid.');
    assert.match(result.checks[2]!.message, /^The avatar settings are invalid: Describe the avatar's persona/);
  });

  const unreachable = [
    { why: 'a network error', error: new AvatarError('network', 'connect ECONNREFUSED 10.0.0.9:443') },
    { why: 'an invalid request about another field', error: new AvatarError('invalid_request', 'connect ECONNREFUSED 10.0.0.9:443', { details: { field: 'call_mode' } }) },
    { why: 'an invalid request without details', error: new AvatarError('invalid_request', 'connect ECONNREFUSED 10.0.0.9:443') },
    { why: 'an invalid request whose field is not text', error: new AvatarError('invalid_request', 'connect ECONNREFUSED 10.0.0.9:443', { details: { field: 42 } }) },
    { why: 'a field ending in "avatar"', error: new AvatarError('invalid_request', 'connect ECONNREFUSED 10.0.0.9:443', { details: { field: 'voice.avatar' } }) },
    { why: 'another error naming an avatar field', error: new AvatarError('server', 'connect ECONNREFUSED 10.0.0.9:443', { details: { field: 'avatar.image_uri' } }) },
    { why: 'a plain Error', error: new Error('connect ECONNREFUSED 10.0.0.9:443') },
  ];
  for (const { why, error } of unreachable) {
    it(`${why}: the service could not be reached, the key not checked`, async () => {
      const { result, warnings } = await refused(error);
      assert.equal(result.ok, false);
      assert.deepEqual(result.checks.slice(1, 3), [
        { id: 'key', ok: null, message: 'Not checked: the service could not be reached.' },
        { id: 'service', ok: false, message: 'The service could not be reached: connect ECONNREFUSED 10.0.0.9:443' },
      ]);
      assert.equal(warnings.length, 1);
    });
  }
});
