/**
 * `cli visitors` (electron/cli/visitors-command.ts): the funnel from the store file the kiosk wrote (through
 * the kiosk's own store, not a hand-written file), thresholded, terminal-safe; a missing or damaged file is
 * said plainly and never moved.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../../electron/cli/probe.ts';
import { runVisitorsCommand } from '../../../electron/cli/visitors-command.ts';
import { silentLogger } from '../../../electron/core/log.ts';
import { createVisitorFunnel } from '../../../electron/kiosk/visitor-funnel.ts';
import { VISITOR_FUNNEL_FILE, openVisitorFunnelStore } from '../../../electron/kiosk/visitor-funnel-store.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function io(env: Record<string, string> = {}): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env, logger: silentLogger, onSignal: () => () => {} };
}

/** A data folder with what a kiosk counted: 7 taps refused while closed, one conversation. */
function countedFolder(): { dir: string; nowMs: number } {
  const dir = mkdtempSync(join(tmpdir(), 'cli-visitors-'));
  dirs.push(dir);
  const clock = new FakeClock(Date.UTC(2026, 2, 11, 13, 0));
  const store = openVisitorFunnelStore({ dir, timeZone: 'Europe/Berlin', clock });
  const funnel = createVisitorFunnel({ store, clock, presence: () => false });
  for (let i = 0; i < 7; i++) funnel.refused('closed');
  funnel.tap({ callMode: 'audio', avatarId: 'kim', language: 'en' });
  store.close();
  return { dir, nowMs: clock.now() };
}

describe('cli visitors', () => {
  it('prints today and the week from the kiosk data folder (AVATAR_KIOSK_DATA), counts under 5 as "fewer than 5"', () => {
    const { dir, nowMs } = countedFolder();
    const out = io({ AVATAR_KIOSK_DATA: dir });
    assert.equal(runVisitorsCommand({ json: false, nowMs }, out), 0);
    assert.equal(
      out.out.join(''),
      [
        'Visitors (counts only; times in Europe/Berlin; counts under 5 are shown as "fewer than 5")',
        'No passers-by were counted (presence detection is off, or nobody was noticed): only taps and calls.',
        '',
        'Today (2026-03-11)',
        '  Tapped                     8',
        '  Refused: age gate          0',
        '  Refused: closed            7',
        '  Refused: out of order      0',
        '  Gave up while connecting   0',
        '  Failed before live         0',
        '  Went live                  0',
        '  Ended well                 0',
        '  Ended badly                0',
        '',
        'The last 7 days',
        '  Day                  Tapped      Went live     Ended well',
        '  2026-03-11                8              0              0',
        '',
        'Largest drop over the last 7 days: 100 % of those who tapped never went live.',
        '',
      ].join('\n'),
    );
  });

  it('--json gives the thresholded export', () => {
    const { dir, nowMs } = countedFolder();
    const out = io();
    assert.equal(runVisitorsCommand({ file: join(dir, VISITOR_FUNNEL_FILE), json: true, nowMs }, out), 0);
    const ex = JSON.parse(out.out.join(''));
    assert.equal(ex.today.counts.tapped, 8);
    assert.deepEqual(ex.today.counts.byAvatar, { kim: { tapped: { lessThan: 5 }, live: 0 } });
    assert.deepEqual(ex.hours.map((h: { hour: string }) => h.hour), ['2026-03-11T14']);
  });

  it('a missing file and a damaged one are said plainly; the damaged file stays where it is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-visitors-'));
    dirs.push(dir);
    const path = join(dir, VISITOR_FUNNEL_FILE);
    assert.throws(() => runVisitorsCommand({ file: path, json: false }, io()), { message: `No visitor counts at ${path} (the kiosk writes them once it has counted someone); pass --file PATH.` });
    writeFileSync(path, '{"v":1');
    assert.throws(() => runVisitorsCommand({ file: path, json: false }, io()), { message: `The visitor counts file ${path} could not be read: it is not JSON.` });
    assert.equal(readFileSync(path, 'utf8'), '{"v":1');
  });
});
