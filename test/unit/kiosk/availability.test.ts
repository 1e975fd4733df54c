/**
 * Availability (electron/kiosk/availability.ts) on its own: what the warm connection, the spare manager,
 * the renderer and the log hear, in order, when the attract screen reports, the opening hours change and
 * an update holds new calls; and the words a refused tap is given. Everything it talks to is recorded.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AttractReportArgs, KioskEvent, OpeningInfo } from '../../../electron/contract.ts';
import { createAvailability } from '../../../electron/kiosk/availability.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';

const OPEN: OpeningInfo = { open: true, nextOpenAt: null, timeZone: null };
const CLOSED: OpeningInfo = { open: false, nextOpenAt: '2026-12-01T09:00:00.000Z', timeZone: 'Europe/Paris' };
const SHOWING: AttractReportArgs = { showing: true, present: true };

function make() {
  const calls: string[] = [];
  const events: KioskEvent[] = [];
  const logger = recordingLogger();
  let closing = false;
  const availability = createAvailability({
    logger,
    emit: (event) => {
      events.push(event);
      calls.push(`emit ${event.type}`);
    },
    closing: () => closing,
    keepWarm: (showing) => calls.push(`keepWarm ${showing}`),
    spares: {
      report: (args) => calls.push(`spares.report ${args.showing} ${args.present}`),
      discard: (reason) => calls.push(`spares.discard ${reason}`),
    },
  });
  const infos = () => logger.lines.filter((l) => l.level === 'info').map((l) => l.message);
  return { availability, calls, events, infos, startClosing: () => (closing = true) };
}

describe('the attract screen’s report', () => {
  it('while open and not held: the warm connection and the spares hear it as it is', () => {
    const { availability, calls } = make();
    assert.deepEqual(availability.report(SHOWING), { ok: true, value: undefined });
    availability.report({ showing: false, present: false });
    assert.deepEqual(calls, ['keepWarm true', 'spares.report true true', 'keepWarm false', 'spares.report false false']);
  });

  it('while shutting down it is kept (replayed to nobody) and tells nobody', () => {
    const { availability, calls, startClosing } = make();
    startClosing();
    assert.deepEqual(availability.report(SHOWING), { ok: true, value: undefined });
    availability.replay();
    assert.deepEqual(calls, []);
  });

  it('replay tells the warm connection and the spares the last report again', () => {
    const { availability, calls } = make();
    availability.replay();
    availability.report(SHOWING);
    calls.length = 0;
    availability.replay();
    assert.deepEqual(calls, ['keepWarm true', 'spares.report true true']);
  });
});

describe('the opening hours', () => {
  it('closing: nothing kept warm, the spares hear "not showing" before the spare is dropped, then the renderer is told', () => {
    const { availability, calls, events, infos } = make();
    availability.report(SHOWING);
    calls.length = 0;
    availability.setOpening(CLOSED);
    assert.deepEqual(calls, ['keepWarm false', 'spares.report false true', 'spares.discard closed', 'emit opening']);
    assert.deepEqual(events, [{ type: 'opening', opening: CLOSED }]);
    assert.deepEqual(infos(), ['Opening hours: closed']);
    assert.deepEqual(availability.opening, CLOSED);
    assert.equal(availability.refusal(), 'The kiosk is closed (outside its opening hours).');
    // A report while closed still makes no spares.
    calls.length = 0;
    availability.report(SHOWING);
    assert.deepEqual(calls, ['keepWarm false', 'spares.report false true']);
  });

  it('opening again: the last report goes through as it is, nothing dropped', () => {
    const { availability, calls, infos } = make();
    availability.setOpening(CLOSED);
    availability.report(SHOWING);
    calls.length = 0;
    availability.setOpening(OPEN);
    assert.deepEqual(calls, ['keepWarm true', 'spares.report true true', 'emit opening']);
    assert.deepEqual(infos(), ['Opening hours: closed', 'Opening hours: open']);
    assert.equal(availability.refusal(), null);
  });

  it('the same hours again change nothing; a new next opening or time zone alone is told', () => {
    const { availability, calls } = make();
    availability.setOpening({ ...OPEN });
    assert.equal(calls.length, 0, 'the same as the start');
    availability.setOpening(CLOSED);
    calls.length = 0;
    availability.setOpening({ ...CLOSED });
    assert.equal(calls.length, 0, 'the same closed hours again');
    availability.setOpening({ ...CLOSED, nextOpenAt: '2026-12-02T09:00:00.000Z' });
    availability.setOpening({ ...CLOSED, nextOpenAt: '2026-12-02T09:00:00.000Z', timeZone: 'Asia/Tokyo' });
    assert.deepEqual(calls.filter((c) => c.startsWith('emit')), ['emit opening', 'emit opening']);
  });

  it('what the page reads is a copy: changing it changes nothing here', () => {
    const { availability } = make();
    const given = { ...CLOSED };
    availability.setOpening(given);
    given.open = true;
    const read = availability.opening as { open: boolean };
    read.open = true;
    assert.equal(availability.opening.open, false);
  });

  it('a change while shutting down is kept but tells nobody', () => {
    const { availability, calls, startClosing } = make();
    startClosing();
    availability.setOpening(CLOSED);
    assert.deepEqual(calls, []);
    assert.equal(availability.opening.open, false);
  });
});

describe('the hold for an update', () => {
  it('holding: "not showing" first, the spare dropped, the renderer told; a tap is refused with the update’s words', () => {
    const { availability, calls, events, infos } = make();
    availability.report(SHOWING);
    calls.length = 0;
    availability.setHold('updating');
    assert.deepEqual(calls, ['keepWarm false', 'spares.report false true', 'spares.discard held', 'emit hold']);
    assert.deepEqual(events, [{ type: 'hold', hold: 'updating' }]);
    assert.equal(availability.hold, 'updating');
    assert.equal(availability.refusal(), 'The kiosk is updating; back in a moment.');
    assert.deepEqual(infos(), ['New calls held']);
  });

  it('released: the last report goes through again, nothing dropped; the same hold twice is told once', () => {
    const { availability, calls, infos } = make();
    availability.report(SHOWING);
    availability.setHold('updating');
    availability.setHold('updating');
    calls.length = 0;
    availability.setHold(null);
    availability.setHold(null);
    assert.deepEqual(calls, ['keepWarm true', 'spares.report true true', 'emit hold']);
    assert.deepEqual(infos(), ['New calls held', 'New calls taken again']);
    assert.equal(availability.refusal(), null);
  });

  it('closed and held: the closing is the reason given', () => {
    const { availability } = make();
    availability.setHold('updating');
    availability.setOpening(CLOSED);
    assert.equal(availability.refusal(), 'The kiosk is closed (outside its opening hours).');
  });

  it('a hold while shutting down changes nothing and tells nobody', () => {
    const { availability, calls, startClosing } = make();
    startClosing();
    availability.setHold('updating');
    assert.deepEqual(calls, []);
    assert.equal(availability.hold, null);
  });
});
