/**
 * `cli fleet send` as the table of commands makes it (electron/cli/fleet.ts): --help lists exactly the
 * table's commands with their one argument and summary; `COMMAND [ARG]` becomes the command the console
 * gets (the argument as itself, or a JSON object of the whole command); what goes over HTTP and what is
 * printed, against a recording console.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { USAGE } from '../../../electron/cli/index.ts';
import { commandFromWords, runFleetCommand, type FleetCliOptions } from '../../../electron/cli/fleet.ts';
import type { CliIo } from '../../../electron/cli/probe.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { silentLogger } from '../../../electron/core/log.ts';
import { COMMAND_NAMES, commandRow } from '../../../electron/fleet/command-table.ts';
import type { KioskRow } from '../../../electron/fleet/console/view.ts';

const refusedWith = (message: string) => (error: unknown) => error instanceof AvatarError && error.code === 'invalid_request' && error.message === message;

describe('cli fleet: --help', () => {
  it('lists exactly the table\'s commands, in its order, each with its argument and its summary', () => {
    const lines = USAGE.split('\n');
    const from = lines.findIndex((l) => l.endsWith('COMMAND is one of:'));
    const to = lines.findIndex((l) => l.startsWith('  fleet watch'));
    assert.ok(from > 0 && to > from, 'the list of commands under fleet send');
    const listed = lines.slice(from + 1, to).map((l) => /^ {4}(\S+)( [A-Z]+)? +(.+)$/.exec(l)!.slice(1));
    assert.deepEqual(
      listed,
      COMMAND_NAMES.map((name) => {
        const row = commandRow(name);
        return [name, row.arg ? ` ${row.arg.field.toUpperCase()}` : undefined, row.interrupts ? `${row.summary} (during a call: "force")` : row.summary];
      }),
    );
  });
});

describe('cli fleet send: COMMAND [ARG]', () => {
  it('a command alone; a JSON object beside a command without an argument is the whole command', () => {
    assert.deepEqual(commandFromWords('ping', undefined), { cmd: 'ping' });
    assert.deepEqual(commandFromWords('reload', '{"force":true}'), { force: true, cmd: 'reload' });
    assert.throws(() => commandFromWords('reload', '5'), refusedWith('The command\'s JSON must be an object such as {"force":true}.'));
    assert.throws(() => commandFromWords('reload', 'now'), refusedWith("The command's JSON does not parse: now"));
  });

  it('a whole-number argument is itself; a word that is not one goes to the kiosk\'s parser as it is', () => {
    assert.deepEqual(commandFromWords('set-volume', '40'), { cmd: 'set-volume', percent: 40 });
    assert.deepEqual(commandFromWords('set-volume', 'forty'), { cmd: 'set-volume', percent: 'forty' });
    assert.deepEqual(commandFromWords('set-volume', '{"percent":40,"force":true}'), { percent: 40, force: true, cmd: 'set-volume' });
  });

  it('a text argument is itself, null is null', () => {
    assert.deepEqual(commandFromWords('update-pin', '1.4.2'), { cmd: 'update-pin', version: '1.4.2' });
    assert.deepEqual(commandFromWords('update-pin', 'null'), { cmd: 'update-pin', version: null });
    assert.deepEqual(commandFromWords('update-pin', '{"version":"1.4.2"}'), { version: '1.4.2', cmd: 'update-pin' });
  });

  it('a JSON argument is the settings unless the object already names them', () => {
    assert.deepEqual(commandFromWords('apply', '{"avatar":{"name":"Eva"}}'), { cmd: 'apply', settings: { avatar: { name: 'Eva' } } });
    assert.deepEqual(commandFromWords('apply', '{"settings":{"schedule":null},"force":true}'), { settings: { schedule: null }, force: true, cmd: 'apply' });
    assert.throws(() => commandFromWords('apply', '{avatar'), refusedWith("The command's JSON does not parse: {avatar"));
    assert.throws(() => commandFromWords('apply', '5'), refusedWith('The command\'s JSON must be an object such as {"force":true} or {"settings":…}.'));
  });

  it('without a command it names every command of the table; an unknown one goes to the console as it is', () => {
    assert.throws(() => commandFromWords(undefined, undefined), refusedWith(`fleet send needs a command: ${COMMAND_NAMES.join(', ')}.`));
    assert.deepEqual(commandFromWords('format-disk', '{"now":true}'), { now: true, cmd: 'format-disk' });
  });
});

describe('cli fleet send: over the console\'s API', () => {
  const OPTIONS: FleetCliOptions = { consoleUrl: 'http://console.test', tokenFile: undefined, group: undefined, all: false, waitS: 1, json: false };
  const io = (): CliIo & { out: string[] } => {
    const out: string[] = [];
    return { out, stdout: (t) => void out.push(t), stderr: () => undefined, env: { FLEET_CONSOLE_TOKEN: 'tok-1' }, logger: silentLogger, onSignal: () => () => {} };
  };
  const row = (kioskId: string, answer: KioskRow['lastAnswer']) => ({ kioskId, lastAnswer: answer });

  it('set-volume 40 posts the command the table makes, and prints each kiosk\'s answer', async () => {
    const posted: unknown[] = [];
    const fake = (async (url: string, init?: RequestInit) => {
      if (url.endsWith('/api/command')) {
        posted.push([url, (init?.headers as Record<string, string>).authorization, JSON.parse(String(init?.body))]);
        return Response.json({ ok: true, id: 'c-1', expected: ['lobby-1'], expiresAt: '2026-11-24T10:02:00.000Z' });
      }
      posted.push([url]);
      // The command's own answers, as the console streams them (/api/commands/<id>/stream), until done.
      const answer = { kioskId: 'lobby-1', ok: true, expired: false, summary: '{"avatarVolume":40}', screenshotUrl: null, at: '2026-11-24T10:00:01.000Z' };
      const record = { id: 'c-1', at: '2026-11-24T10:00:00.000Z', by: 'ops', cmd: 'set-volume', args: '{"percent":40}', target: 'kiosks lobby-1', expiresAt: '2026-11-24T10:02:00.000Z', expected: 1, ok: 1, refused: 0, expired: 0, state: 'done', waves: null, notSent: 0, note: null, problems: [] };
      const frames = [{ type: 'record', command: { ...record, ok: 0, state: 'waiting' }, answers: [] }, { type: 'answer', answer }, { type: 'done', command: record }];
      return new Response(frames.map((f) => `event: command\ndata: ${JSON.stringify(f)}\n\n`).join(''));
    }) as typeof fetch;
    const out = io();
    assert.equal(await runFleetCommand(['send', 'lobby-1', 'set-volume', '40'], OPTIONS, out, fake), 0);
    assert.deepEqual(posted, [['http://console.test/api/command', 'Bearer tok-1', { target: { kiosks: ['lobby-1'] }, command: { cmd: 'set-volume', percent: 40 } }], ['http://console.test/api/commands/c-1/stream']]);
    assert.deepEqual(out.out, ['lobby-1\tok\t{"avatarVolume":40}\n']);
  });

  it('a value the console refuses in the kiosk\'s words is an error with those words', async () => {
    const message = 'Invalid command at "percent": the volume is a whole percent from 0 to 100.';
    const fake = (async () => Response.json({ ok: false, error: { code: 'invalid_request', message } })) as unknown as typeof fetch;
    await assert.rejects(runFleetCommand(['send', 'set-volume', '140'], { ...OPTIONS, all: true }, io(), fake), refusedWith(message));
  });
});
