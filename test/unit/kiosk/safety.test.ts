/**
 * Who the kiosk is for, decided from its settings (kiosk/safety-config.ts), the age gate before an adult
 * call (kiosk/age-gate.ts, on a fake clock), its counts (kiosk/age-gate-counts.ts), the calls the content
 * review ended (kiosk/audit-count.ts), and the privacy address's QR code (kiosk/privacy-qr.ts), read back
 * with a QR reader from the pixels the page would draw.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import jsQR from 'jsqr';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { createAgeGate, GATE_CLOSED_MESSAGE, PASS_TTL_MS, STAFF_CHECK_MESSAGE } from '../../../electron/kiosk/age-gate.ts';
import { createAgeGateCounter } from '../../../electron/kiosk/age-gate-counts.ts';
import { createAuditCount } from '../../../electron/kiosk/audit-count.ts';
import { qrDrawing } from '../../../electron/kiosk/privacy-qr.ts';
import { publicSafety, regionAllowed, resolveSafety, type SafetyPosture } from '../../../electron/kiosk/safety-config.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import type { KioskEvent } from '../../../electron/contract.ts';

const opts = { appRoot: '/opt/kiosk', readText: () => 'A persona.' };
const adult = (over: Record<string, unknown> = {}) => resolveSafety({ audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'], minimumAge: 18, ageCheck: 'self' }, ...over });

describe('the audience a kiosk runs as', () => {
  it('public by default: moderation strict, no gate; config.json\'s moderation "disabled" does not change that', () => {
    assert.deepEqual(resolveConfig({ moderation: 'disabled' }, {}, opts).safety, { audience: 'public', requested: 'public', moderation: 'strict', region: null, refusal: null, ageGate: null });
  });

  it('adult in an allowed region: moderation disabled (or its own strict), the gate with its age and check', () => {
    assert.deepEqual(adult(), { audience: 'adult', requested: 'adult', moderation: 'disabled', region: 'DE', refusal: null, ageGate: { minimumAge: 18, ageCheck: 'self' } });
    assert.equal(adult({ moderation: 'strict' }).moderation, 'strict');
  });

  it('a country allows its subdivisions; a subdivision allows only itself', () => {
    assert.equal(regionAllowed('US-NV', ['US']), true);
    assert.equal(regionAllowed('US-CA', ['US-NV']), false);
    assert.equal(regionAllowed('US', ['US-NV']), false);
    assert.equal(regionAllowed('DEU', ['DE']), false);
    assert.equal(regionAllowed('DE', []), false);
  });

  it('adult outside its regions, or without one, runs public and says why', () => {
    assert.deepEqual(adult({ region: 'FR' }), {
      audience: 'public',
      requested: 'adult',
      moderation: 'strict',
      region: 'FR',
      refusal: 'Audience "adult" is not allowed in region FR (adult.allowedRegions: DE), so the kiosk runs as public (moderation strict).',
      ageGate: null,
    });
    assert.equal(resolveSafety({ audience: 'adult', region: 'DE' }).refusal, 'Audience "adult" is not allowed in region DE (adult.allowedRegions: none), so the kiosk runs as public (moderation strict).');
  });

  it('refuses a region that is not an ISO 3166 code, naming the field', () => {
    assert.throws(() => resolveConfig({ region: 'Germany' }, {}, opts), /"region": must be an ISO 3166 code such as "DE" or "US-CA" \(upper case\)/);
    assert.throws(() => resolveConfig({ adult: { allowedRegions: ['de'] } }, {}, opts), /"adult\.allowedRegions\.0"/);
    assert.throws(() => resolveConfig({ adult: { minimumAge: 12 } }, {}, opts), /"adult\.minimumAge"/);
    assert.throws(() => resolveConfig({ privacy: { url: 'ftp://venue.example/privacy' } }, {}, opts), /"privacy\.url"/);
  });
});

describe('the settings of the audience, at their edges', () => {
  const region = (value: string) => {
    try {
      return resolveConfig({ region: value }, {}, opts).region;
    } catch {
      return 'refused';
    }
  };

  it('a region is two capital letters, with an optional subdivision of one to three capitals or digits', () => {
    for (const ok of ['DE', 'US-CA', 'GB-ENG', 'FR-75', 'ES-M', 'CN-11', 'IN-UP', 'ZZ-9A1']) assert.equal(region(ok), ok, ok);
    for (const bad of ['D', 'DEU', 'de', 'De', 'D1', '12', 'US-', 'US-CALI', 'US-ca', 'US_CA', ' DE', 'DE ', 'xDE', 'US-CA-1', 'ÄB']) assert.equal(region(bad), 'refused', bad);
  });

  it('the adult block\'s defaults: no region allowed, 18, the visitor confirms', () => {
    const c = resolveConfig({ audience: 'adult', region: 'DE', adult: {} }, {}, opts);
    assert.deepEqual(c.adult, { allowedRegions: [], minimumAge: 18, ageCheck: 'self' });
    assert.equal(c.safety.audience, 'public');
    assert.deepEqual(resolveSafety({ audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'], minimumAge: 18, ageCheck: 'self' } }).ageGate, { minimumAge: 18, ageCheck: 'self' });
    assert.equal(resolveSafety({ audience: 'adult', region: 'DE' }).requested, 'adult');
  });

  it('a privacy notice needs at least one language; its address is http(s), at most 300 characters', () => {
    assert.throws(() => resolveConfig({ privacy: { notice: {} } }, {}, opts), /"privacy\.notice": needs at least one language/);
    assert.throws(() => resolveConfig({ privacy: { url: `https://venue.example/${'p'.repeat(300)}` } }, {}, opts), /"privacy\.url"/);
    assert.equal(resolveConfig({ privacy: { url: 'http://venue.example/privacy' } }, {}, opts).privacy?.url, 'http://venue.example/privacy');
  });

  it('what the page is told is a copy: changing it changes nothing the kiosk holds', () => {
    const config = resolveConfig({ audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'] }, privacy: { notice: { en: 'Notice.' } } }, {}, opts);
    const told = publicSafety(config);
    told.ageGate!.minimumAge = 3;
    told.privacy.notice!.en = 'Changed.';
    assert.equal(config.safety.ageGate!.minimumAge, 18);
    assert.equal(config.privacy!.notice!.en, 'Notice.');
    assert.deepEqual(told.privacy, { notice: { en: 'Changed.' }, url: null, qr: null });
  });
});

describe('the audience: what the last measurement left alive', () => {
  it('a public kiosk with nothing asked of it has no refusal to tell', () => {
    assert.equal(resolveSafety({ audience: 'public' }).refusal, null);
    assert.equal(resolveSafety({ audience: 'public' }).requested, 'public');
  });

  it('the allowed regions are listed with commas in a refusal', () => {
    assert.equal(
      resolveSafety({ audience: 'adult', region: 'FR', adult: { allowedRegions: ['DE', 'AT'], minimumAge: 18, ageCheck: 'self' } }).refusal,
      'Audience "adult" is not allowed in region FR (adult.allowedRegions: DE, AT), so the kiosk runs as public (moderation strict).',
    );
  });

  it('the privacy address is http or https, nothing that only starts or ends like them', () => {
    for (const url of ['httpsx://venue.example/privacy', 'xhttp://venue.example/privacy']) {
      assert.throws(() => resolveConfig({ privacy: { url } }, {}, opts), /"privacy\.url": must be an http\(s\) URL/, url);
    }
  });

  it('the age gate says in words why a call waits', () => {
    assert.equal(GATE_CLOSED_MESSAGE, 'This kiosk is for adults: each call starts only after the age gate is passed.');
    assert.equal(STAFF_CHECK_MESSAGE, 'On this kiosk a member of staff checks the age: staff unlock each call with the PIN.');
  });
});

describe('the age gate', () => {
  const setup = (posture: SafetyPosture = adult()) => {
    const clock = new FakeClock();
    const counts = createAgeGateCounter();
    let current = posture;
    const gate = createAgeGate({ posture: () => current, counts, clock });
    return { clock, counts, gate, set: (p: SafetyPosture) => (current = p) };
  };

  it('a public kiosk has none: every start may go on, nothing is counted', () => {
    const { gate, counts } = setup(resolveSafety({ audience: 'public' }));
    assert.deepEqual(gate.ask(), { required: false });
    assert.equal(gate.admit(), null);
    assert.throws(() => gate.answer(true), /This kiosk has no age gate\./);
    assert.deepEqual(counts.snapshot(), { asked: 0, confirmed: 0, declined: 0 });
  });

  it('without a pass nothing starts; "yes" gives a pass for one start; "no" none', () => {
    const { gate, counts } = setup();
    assert.equal(gate.admit(), GATE_CLOSED_MESSAGE);
    assert.deepEqual(gate.ask(), { required: true, minimumAge: 18, ageCheck: 'self' });
    assert.deepEqual(gate.answer(false), { passed: false });
    assert.equal(gate.admit(), GATE_CLOSED_MESSAGE);
    gate.ask();
    assert.deepEqual(gate.answer(true), { passed: true });
    assert.equal(gate.admit(), null);
    assert.equal(gate.admit(), GATE_CLOSED_MESSAGE, 'the pass was used');
    assert.deepEqual(counts.snapshot(), { asked: 2, confirmed: 1, declined: 1 });
  });

  it('a pass not used within its time is gone; a new visitor at the gate drops an earlier pass', async () => {
    const { gate, clock } = setup();
    gate.ask();
    gate.answer(true);
    await clock.advance(PASS_TTL_MS + 1);
    assert.equal(gate.admit(), GATE_CLOSED_MESSAGE);
    gate.ask();
    gate.answer(true);
    gate.ask();
    assert.equal(gate.admit(), GATE_CLOSED_MESSAGE);
  });

  it('ageCheck staff: the visitor cannot say yes for themselves (but may say no); staff unlock one start', () => {
    const { gate, counts } = setup(adult({ adult: { allowedRegions: ['DE'], minimumAge: 21, ageCheck: 'staff' } }));
    assert.deepEqual(gate.ask(), { required: true, minimumAge: 21, ageCheck: 'staff' });
    assert.throws(() => gate.answer(true), (e: Error & { code?: string }) => e.code === 'forbidden' && e.message === STAFF_CHECK_MESSAGE);
    assert.equal(gate.admit(), GATE_CLOSED_MESSAGE);
    gate.ask();
    assert.deepEqual(gate.staffUnlock(), { passed: true });
    assert.equal(gate.admit(), null);
    assert.deepEqual(counts.snapshot(), { asked: 2, confirmed: 1, declined: 0 });
  });

  it('counts are copies: a snapshot does not change afterwards', () => {
    const counts = createAgeGateCounter();
    counts.count('asked');
    const before = counts.snapshot();
    counts.count('asked');
    assert.deepEqual([before, counts.snapshot()], [{ asked: 1, confirmed: 0, declined: 0 }, { asked: 2, confirmed: 0, declined: 0 }]);
  });
});

describe('calls the content review ended', () => {
  const ended = (liveId: string, reason: string): KioskEvent =>
    ({ type: 'state', previous: 'live', state: { phase: 'ended', liveId, summary: { hangupReason: reason } } }) as unknown as KioskEvent;
  it('counts each session once, by its hang-up reason or the content_blocked failure; nothing else', () => {
    const audits = createAuditCount();
    audits.observe(ended('a', 'audit_violation'));
    audits.observe(ended('a', 'audit_violation')); // told again
    audits.observe(ended('b', 'user_end'));
    audits.observe({ type: 'state', previous: 'live', state: { phase: 'failed', liveId: 'c', error: { code: 'content_blocked', message: 'x' }, summary: null } } as unknown as KioskEvent);
    audits.observe({ type: 'muted', muted: true } as KioskEvent);
    assert.equal(audits.count, 2);
  });
});

describe('the age gate at its edges', () => {
  const setup = (posture: SafetyPosture = adult()) => {
    const clock = new FakeClock();
    const counts = createAgeGateCounter();
    return { clock, counts, gate: createAgeGate({ posture: () => posture, counts, clock }) };
  };

  it('a pass still holds at exactly its time, not a millisecond after', async () => {
    const { gate, clock } = setup();
    gate.ask();
    gate.answer(true);
    await clock.advance(PASS_TTL_MS);
    assert.equal(gate.admit(), null);
    gate.ask();
    gate.answer(true);
    await clock.advance(PASS_TTL_MS + 1);
    assert.equal(gate.admit(), GATE_CLOSED_MESSAGE);
  });

  it('"no" takes back a pass the same visitor had', () => {
    const { gate, counts } = setup();
    gate.ask();
    gate.answer(true);
    gate.answer(false);
    assert.equal(gate.admit(), GATE_CLOSED_MESSAGE);
    assert.deepEqual(counts.snapshot(), { asked: 1, confirmed: 1, declined: 1 });
  });

  it('a public kiosk refuses a staff unlock too, and counts nothing', () => {
    const { gate, counts } = setup(resolveSafety({ audience: 'public' }));
    assert.throws(() => gate.staffUnlock(), (e: Error & { code?: string }) => e.code === 'invalid_request' && e.message === 'This kiosk has no age gate.');
    assert.throws(() => gate.answer(false), (e: Error & { code?: string }) => e.code === 'invalid_request');
    assert.deepEqual(counts.snapshot(), { asked: 0, confirmed: 0, declined: 0 });
  });
});

describe('calls the content review ended: which ends count', () => {
  const state = (s: Record<string, unknown>): KioskEvent => ({ type: 'state', previous: 'live', state: s }) as unknown as KioskEvent;

  it('a failed call with the audit hang-up counts; an ended call with another reason, or a live one, does not', () => {
    const audits = createAuditCount();
    audits.observe(state({ phase: 'failed', liveId: 'a', error: { code: 'network', message: 'x' }, summary: { hangupReason: 'audit_violation' } }));
    audits.observe(state({ phase: 'failed', liveId: 'b', error: { code: 'network', message: 'x' }, summary: null }));
    audits.observe(state({ phase: 'live', liveId: 'c', sinceMs: 0, endsAtMs: 1, summary: { hangupReason: 'audit_violation' } }));
    audits.observe(state({ phase: 'ended', liveId: 'd', summary: null }));
    assert.equal(audits.count, 1);
  });

  it('ends without a live id are each counted; the same id told twice in a row only once', () => {
    const audits = createAuditCount();
    const blocked = { phase: 'failed', error: { code: 'content_blocked', message: 'x' }, summary: null };
    audits.observe(state(blocked));
    audits.observe(state(blocked));
    assert.equal(audits.count, 2);
    audits.observe(state({ ...blocked, liveId: 'L' }));
    audits.observe(state({ ...blocked, liveId: 'L' }));
    audits.observe(state({ ...blocked, liveId: 'M' }));
    audits.observe(state({ ...blocked, liveId: 'L' }));
    assert.equal(audits.count, 5);
  });
});

describe('the privacy address as a QR code', () => {
  /** The drawing as the page renders it: 8 px modules, a 4-module white quiet zone. */
  function pixels(drawing: { size: number; path: string }): { data: Uint8ClampedArray; width: number } {
    const scale = 8;
    const width = (drawing.size + 8) * scale;
    const data = new Uint8ClampedArray(width * width * 4).fill(255);
    for (const m of drawing.path.matchAll(/M(\d+) (\d+)h1v1h-1z/g)) {
      const [x, y] = [Number(m[1]) + 4, Number(m[2]) + 4];
      for (let dy = 0; dy < scale; dy++) for (let dx = 0; dx < scale; dx++) data.fill(0, ((y * scale + dy) * width + x * scale + dx) * 4, ((y * scale + dy) * width + x * scale + dx) * 4 + 3);
    }
    return { data, width };
  }
  it('decodes to the URL it was made from', () => {
    for (const url of ['https://venue.example/privacy', 'https://grand-hotel.example/privacy?kiosk=lobby-1&lang=de#rights']) {
      const { data, width } = pixels(qrDrawing(url));
      assert.equal(jsQR(data, width, width)?.data, url);
    }
  });
});
