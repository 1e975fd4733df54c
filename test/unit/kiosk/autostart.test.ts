/**
 * What brings a kiosk back after a crash, per OS (build/autostart/, shipped by electron-builder.yml):
 * the launchd agent (parsed as a plist), the systemd user unit (`systemd-analyze verify` when systemd is
 * here), the Task Scheduler task (parsed as Task Scheduler XML) and the Shell Launcher script. Each names
 * the executable the installers really create, and the supervised ones ask the app to leave restarts to
 * them (AVATAR_KIOSK_SUPERVISED, kiosk/os-integration.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { relaunchPlan, SUPERVISED_RESTART_EXIT_CODE } from '../../../electron/kiosk/os-integration.ts';

const ROOT = join(import.meta.dirname, '../../..');
const DIR = join(ROOT, 'build/autostart');
const require = createRequire(import.meta.url);
// js-yaml (with electron-builder) and plist (electron-builder's own plist reader): no types of their own.
const yaml = require('js-yaml') as { load(text: string): unknown };
const plist = require('plist') as { parse(text: string): unknown };

interface ExtraResource {
  from: string;
  to: string;
}
interface BuilderConfig {
  appId: string;
  productName: string;
  linux: { executableName: string; extraResources?: ExtraResource[] };
  deb: { fpm?: string[] };
  win: { extraResources?: ExtraResource[] };
  mac: { extraResources?: ExtraResource[] };
}
const config = yaml.load(readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8')) as BuilderConfig;
const read = (file: string) => readFileSync(join(DIR, file), 'utf8');

describe('autostart: macOS launchd agent', () => {
  const agent = plist.parse(read('com.avatarkiosk.app.plist')) as Record<string, any>;

  it('is a valid plist for the app id, running the installed app', () => {
    assert.equal(agent.Label, config.appId);
    assert.deepEqual(agent.ProgramArguments, [`/Applications/${config.productName}.app/Contents/MacOS/${config.productName}`]);
    assert.equal(agent.LimitLoadToSessionType, 'Aqua');
  });

  it('starts at log-in and again after a crash, but not after "Exit kiosk" (exit 0), throttled', () => {
    assert.equal(agent.RunAtLoad, true);
    assert.deepEqual(agent.KeepAlive, { SuccessfulExit: false });
    assert.ok(agent.ThrottleInterval >= 10);
    assert.equal(agent.EnvironmentVariables.AVATAR_KIOSK_SUPERVISED, '1');
  });

  it('ships in the app bundle', () => {
    assert.deepEqual(config.mac.extraResources, [{ from: 'build/autostart/com.avatarkiosk.app.plist', to: 'autostart/com.avatarkiosk.app.plist' }]);
  });
});

describe('autostart: Linux systemd user unit', () => {
  const unit = read('avatar-kiosk.service');
  const value = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]);

  it('runs what the deb installs, restarts on failure only, and is supervised', () => {
    assert.deepEqual(value('ExecStart'), [`/usr/bin/${config.linux.executableName}`]);
    assert.deepEqual(value('Restart'), ['on-failure']);
    assert.deepEqual(value('Environment'), ['AVATAR_KIOSK_SUPERVISED=1']);
    assert.deepEqual(value('WantedBy'), ['graphical-session.target']);
    assert.ok(Number(value('TimeoutStopSec')[0]) > 8, 'longer than the app\'s own shutdown bound');
  });

  it('passes systemd-analyze verify', { skip: spawnSync('systemd-analyze', ['--version']).status === 0 ? false : 'systemd-analyze is not installed' }, () => {
    // The binary is not installed here: verify the same unit with an executable that exists.
    const dir = mkdtempSync(join(tmpdir(), 'ak-unit-'));
    const file = join(dir, 'avatar-kiosk.service');
    writeFileSync(file, unit.replace(/^ExecStart=.*$/m, `ExecStart=${process.execPath} --version`));
    const r = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8' });
    const problems = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() && !/graphical-session\.target/.test(l));
    assert.equal(r.status === 0 || problems.length === 0, true, `${r.stdout}${r.stderr}`);
    assert.deepEqual(problems, []);
  });

  it('ships beside the app and, from the deb, in /usr/lib/systemd/user', () => {
    assert.deepEqual(config.linux.extraResources, [{ from: 'build/autostart/avatar-kiosk.service', to: 'autostart/avatar-kiosk.service' }]);
    assert.deepEqual(config.deb.fpm, ['build/autostart/avatar-kiosk.service=/usr/lib/systemd/user/avatar-kiosk.service']);
  });
});

describe('autostart: Windows', () => {
  const NS = 'http://schemas.microsoft.com/windows/2004/02/mit/task';
  // Parsed inside each test, so a malformed file fails the test (not the file's loading).
  const parse = () => new DOMParser({ errorHandler: (level: string, message: unknown) => assert.fail(`Task XML ${level}: ${String(message)}`) }).parseFromString(read('avatar-kiosk-task.xml'), 'text/xml');
  const text = (name: string) => [...Array.from(parse().getElementsByTagNameNS(NS, name))].map((e) => e.textContent?.trim());

  it('the Task Scheduler task starts the installed exe at log-on, once, with no time limit', () => {
    const doc = parse();
    assert.equal(doc.documentElement?.localName, 'Task');
    assert.equal(doc.documentElement?.namespaceURI, NS);
    assert.equal(doc.getElementsByTagNameNS(NS, 'LogonTrigger').length, 1);
    assert.deepEqual(text('Command'), [`"%ProgramFiles%\\${config.productName}\\${config.productName}.exe"`]);
    assert.deepEqual(text('MultipleInstancesPolicy'), ['IgnoreNew']);
    assert.deepEqual(text('ExecutionTimeLimit'), ['PT0S']);
    assert.deepEqual(text('DisallowStartIfOnBatteries'), ['false']);
    assert.deepEqual(text('RunLevel'), ['LeastPrivilege']);
  });

  it('Shell Launcher restarts the kiosk whenever it ends, except a deliberate exit (0)', () => {
    const script = read('shell-launcher.ps1');
    assert.match(script, new RegExp(`\\$env:ProgramFiles\\\\${config.productName}\\\\${config.productName}\\.exe`));
    assert.match(script, /SetCustomShell\(\$sid, \$Shell, \(\[int\[\]\]@\(0\)\), \(\[int\[\]\]@\(\$DoNothing\)\), \$RestartShell\)/);
    assert.match(script, /\$RestartShell = 0\b/);
    assert.match(script, /\$DoNothing = 3\b/);
  });

  it('both ship beside the app', () => {
    assert.deepEqual(config.win.extraResources, [
      { from: 'build/autostart/avatar-kiosk-task.xml', to: 'autostart/avatar-kiosk-task.xml' },
      { from: 'build/autostart/shell-launcher.ps1', to: 'autostart/shell-launcher.ps1' },
    ]);
  });
});

describe('relaunch under a supervisor', () => {
  it('exits with 75 for the supervisor instead of starting a process it would end', () => {
    assert.deepEqual(relaunchPlan({ AVATAR_KIOSK_SUPERVISED: '1', APPIMAGE: '/a.AppImage' }, ['x']), { kind: 'supervisor', exitCode: SUPERVISED_RESTART_EXIT_CODE });
    assert.equal(SUPERVISED_RESTART_EXIT_CODE, 75);
    assert.deepEqual(relaunchPlan({}, ['x']), { kind: 'self', options: undefined });
    assert.deepEqual(relaunchPlan({ APPIMAGE: '/a.AppImage' }, ['/tmp/.mount/x', '--flag']), { kind: 'self', options: { execPath: '/a.AppImage', args: ['--flag'] } });
  });
});

describe('the desktop and the keyring', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { desktopName: string };
  const fuses = (yaml.load(readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8')) as { electronFuses: Record<string, boolean> }).electronFuses;

  it('the app id GNOME\'s global-shortcut portal sees is reverse-DNS: the appId, as the desktop file\'s name', () => {
    assert.equal(pkg.desktopName, `${config.appId}.desktop`);
    assert.match(pkg.desktopName.replace(/\.desktop$/, ''), /^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)+$/);
  });

  it('nothing reaches the OS keyring outside the app\'s 5 s bound: cookie encryption (fetched by Chromium at start-up) is off', () => {
    assert.equal(fuses.enableCookieEncryption, false);
  });
});
