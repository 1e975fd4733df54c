/**
 * `cli fleet list | watch | send` print what kiosks wrote (their status fields, their answers): a kiosk
 * must not be able to drive the operator's terminal through them. Each output, table or --json, is checked
 * for raw control and format characters with a kiosk whose fields carry escape sequences that would clear
 * the screen, set the window title, forge a row (a newline and a tab) or reverse the text (a bidi override).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runFleetCommand, type FleetCliOptions } from '../../../electron/cli/fleet.ts';
import type { CliIo } from '../../../electron/cli/probe.ts';
import { silentLogger } from '../../../electron/core/log.ts';
import type { KioskRow } from '../../../electron/fleet/console/view.ts';
import { emptyFunnelCounts } from '../../../electron/core/funnel.ts';
import { FleetState } from '../../../electron/fleet/console/state.ts';
import { visitorsView } from '../../../electron/fleet/console/visitors.ts';
import { onlineStatus, T0 } from '../../helpers/fleet-payloads.ts';

const OPTIONS: FleetCliOptions = { consoleUrl: 'http://console.test', tokenFile: undefined, group: undefined, all: false, waitS: 1, json: false };
const EVIL = '\u001b[2J\u001b]0;owned\u0007\u009b31m\nlobby-9\tonline\u202eevil';
/** Any character a terminal acts on rather than shows. */
const RAW = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

const io = (): CliIo & { out: string[] } => {
  const out: string[] = [];
  return { out, stdout: (t) => void out.push(t), stderr: () => undefined, env: { FLEET_CONSOLE_TOKEN: 'tok-1' }, logger: silentLogger, onSignal: () => () => {} };
};
const evilRow = { kioskId: 'k-1', online: true, sinceAt: null, offlineReason: EVIL, group: EVIL, phase: EVIL, version: EVIL, todaySessions: 1, todayCredits: 2, lastErrorCode: EVIL } as unknown as KioskRow;
/** Each printed line, without its final newline: no raw control character, and as many cells as the header says. */
const printed = (out: string[]) => out.join('').split('\n').slice(0, -1);

describe('cli fleet: kiosk-supplied text on the terminal', () => {
  it('list: every field escaped, one line per kiosk with its 9 cells', async () => {
    const out = io();
    await runFleetCommand(['list'], OPTIONS, out, (async () => Response.json({ kiosks: [evilRow] })) as unknown as typeof fetch);
    const lines = printed(out.out);
    assert.equal(lines.length, 2);
    for (const line of lines) assert.doesNotMatch(line.replaceAll('\t', ' '), RAW, line);
    assert.equal(lines[1]!.split('\t').length, 9);
    assert.equal(lines[1]!.split('\t')[3], '\\u001b[2J\\u001b]0;owned\\u0007\\u009b31m\\u000alobby-9\\u0009online\\u202eevil');
  });

  it('list --json: still one JSON line that parses back to the same text, with nothing raw in it', async () => {
    const out = io();
    await runFleetCommand(['list'], { ...OPTIONS, json: true }, out, (async () => Response.json({ kiosks: [evilRow] })) as unknown as typeof fetch);
    const lines = printed(out.out);
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0]!, RAW);
    assert.equal((JSON.parse(lines[0]!) as KioskRow[])[0]!.group, EVIL);
  });

  it('send: the answer and its kiosk escaped', async () => {
    // The command's answers as the console streams them (/api/commands/<id>/stream).
    const answer = { kioskId: 'k-1', ok: true, expired: false, summary: EVIL, screenshotUrl: null, at: 'x' };
    const record = { id: 'c-1', at: 'x', by: 'ops', cmd: 'ping', args: '{}', target: 'kiosk k-1', expiresAt: 'x', expected: 1, ok: 1, refused: 0, expired: 0, state: 'done', waves: null, notSent: 0, note: null, problems: [] };
    const frames = [{ type: 'answer', answer }, { type: 'done', command: record }];
    const fake = (async (url: string) =>
      url.endsWith('/api/command')
        ? Response.json({ ok: true, id: 'c-1', expected: ['k-1'], expiresAt: '2026-11-24T10:02:00.000Z' })
        : new Response(frames.map((f) => `event: command\ndata: ${JSON.stringify(f)}\n\n`).join(''))) as typeof fetch;
    const out = io();
    await runFleetCommand(['send', 'k-1', 'ping'], OPTIONS, out, fake);
    const lines = printed(out.out);
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0]!.replaceAll('\t', ' '), RAW);
    assert.equal(lines[0]!.split('\t').length, 3);
  });

  it('watch: each change on one line, escaped', async () => {
    const frame = `data: ${JSON.stringify({ type: 'rows', connected: true, kiosks: [{ ...evilRow, online: false }] })}\n\n`;
    const fake = (async () => new Response(new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode(frame)), c.close()) }))) as unknown as typeof fetch;
    for (const json of [false, true]) {
      const out = io();
      assert.equal(await runFleetCommand(['watch'], { ...OPTIONS, json }, out, fake), 1);
      const lines = printed(out.out);
      assert.equal(lines.length, 1);
      assert.doesNotMatch(lines[0]!.replaceAll('\t', ' '), RAW);
      if (!json) assert.equal(lines[0]!.split('\t').length, 5);
    }
  });

  it('visitors: the fleet\'s funnel as the console works it out, thresholded, a kiosk\'s group escaped', async () => {
    // The view the console serves, from two kiosks' statuses as they arrive (one claims an evil group).
    const state = new FleetState({ now: () => T0 });
    const day = (tapped: number, live: number) => ({ day: '2026-11-24', counts: { ...emptyFunnelCounts(), noticed: 40, tapped, live, endedWell: live } });
    state.onStatus('k-1', onlineStatus({ kioskId: 'k-1', group: 'lobby', visitors: day(12, 9) }), false);
    state.onStatus('k-2', onlineStatus({ kioskId: 'k-2', group: EVIL, visitors: day(6, 3) }), false);
    const view = visitorsView(state.funnels());
    for (const json of [false, true]) {
      const out = io();
      assert.equal(await runFleetCommand(['visitors'], { ...OPTIONS, json }, out, (async () => Response.json(view)) as unknown as typeof fetch), 0);
      const lines = printed(out.out);
      for (const line of lines) assert.doesNotMatch(line.replaceAll('\t', ' '), RAW, line);
      if (json) {
        assert.equal(lines.length, 1);
        assert.equal((JSON.parse(lines[0]!) as typeof view).groups[0]!.group, EVIL);
        continue;
      }
      assert.deepEqual(lines, [
        'Visitors on 2026-11-24 (each kiosk\'s own day), 2 kiosks; counts under 5 show as "fewer than 5".',
        'noticed                   80',
        'stopped                   fewer than 5 at each of 2 kiosks',
        'greeted                   fewer than 5 at each of 2 kiosks',
        'tapped                    18',
        'refused before the call   fewer than 5 at each of 2 kiosks',
        'gave up while connecting  fewer than 5 at each of 2 kiosks',
        'failed before live        fewer than 5 at each of 2 kiosks',
        'went live                 at least 9 (1 kiosk with fewer than 5 not added)',
        'ended well                at least 9 (1 kiosk with fewer than 5 not added)',
        'ended badly               fewer than 5 at each of 2 kiosks',
        'No drop can be told yet: too few visitors at each step.',
        'GROUP\tKIOSKS\tTAPPED\tWENT LIVE\tLARGEST DROP',
        '\\u001b[2J\\u001b]0;owned\\u0007\\u009b31m\\u000alobby-9\\u0009online\\u202eevil\t1\t6\tfewer than 5 (1 kiosk)\t-',
        'lobby\t1\t12\t9\t-',
      ]);
    }
  });
});
