/**
 * The packaging configuration, read as electron-builder reads it. Packaging itself cannot run here (it
 * downloads Electron and the per-target tools), so these checks pin the keys that decide whether a signed
 * or installed build can capture, start and be found by the desktop: the macOS entitlements, the usage
 * strings, the Linux targets and the desktop file name.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../../..');
// js-yaml comes with electron-builder (no types of its own): only `load` is used.
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

interface BuilderConfig {
  directories: { buildResources: string };
  files: string[];
  publish?: Array<{ provider: string; url?: string; channel?: string }>;
  linux: { target: string[]; executableName?: string; syncDesktopName?: boolean };
  win: { signtoolOptions?: { publisherName?: string[] }; verifyUpdateCodeSignature?: boolean };
  nsis: { oneClick?: boolean; perMachine?: boolean };
  mac: { target?: string[]; hardenedRuntime?: boolean; entitlements?: string; entitlementsInherit?: string; extendInfo?: Record<string, string> };
}
const config = yaml.load(readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8')) as BuilderConfig;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { desktopName?: string; name: string };

/** The `<key>…</key><true/>` entries of a plist dict (the entitlements file has only booleans). */
function trueKeys(plist: string): string[] {
  return [...plist.matchAll(/<key>([^<]+)<\/key>\s*<true\/>/g)].map((m) => m[1]!);
}

describe('packaging: the configuration', () => {
  it('passes electron-builder\'s own schema check (an unknown or misspelt key fails the build)', async () => {
    const require = createRequire(import.meta.url);
    const { validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as { validateConfiguration(c: unknown, log: unknown): Promise<void> };
    const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
    await validateConfiguration(config, new DebugLogger(false));
  });
});

describe('packaging: macOS', () => {
  it('signs with the hardened runtime and one entitlements file for the app and its helpers', () => {
    assert.equal(config.mac.hardenedRuntime, true);
    assert.equal(config.mac.entitlements, 'build/entitlements.mac.plist');
    assert.equal(config.mac.entitlementsInherit, 'build/entitlements.mac.plist');
  });

  it('the entitlements allow the camera, the microphone and what V8 and the native addon need', () => {
    const plist = readFileSync(join(ROOT, config.mac.entitlements!), 'utf8');
    assert.deepEqual(trueKeys(plist).sort(), [
      'com.apple.security.cs.allow-jit',
      'com.apple.security.cs.allow-unsigned-executable-memory',
      'com.apple.security.cs.disable-library-validation',
      'com.apple.security.device.audio-input',
      'com.apple.security.device.camera',
    ]);
  });

  it('the entitlements file lives in buildResources, which is not shipped inside the app', () => {
    assert.equal(config.directories.buildResources, 'build');
    assert.ok(config.mac.entitlements!.startsWith(`${config.directories.buildResources}/`));
    assert.ok(!config.files.some((f) => f.startsWith('build/')));
  });

  it('carries the camera and microphone usage strings macOS shows when asking the user', () => {
    assert.deepEqual(Object.keys(config.mac.extendInfo ?? {}).sort(), ['NSCameraUsageDescription', 'NSMicrophoneUsageDescription']);
    for (const text of Object.values(config.mac.extendInfo!)) assert.match(text, /^Avatar Kiosk uses the (camera|microphone) /);
  });
});

describe('packaging: Linux', () => {
  it('builds the deb (the kiosk target) first, and the AppImage for trying it on a desktop', () => {
    assert.deepEqual(config.linux.target, ['deb', 'AppImage']);
  });

  it('names the desktop file after package.json desktopName, so Wayland app id and desktop entry agree', () => {
    assert.equal(pkg.desktopName, 'com.avatarkiosk.app.desktop');
    assert.equal(config.linux.syncDesktopName, true);
  });
});

describe('packaging: updates', () => {
  it('publishes to a generic feed, so the build writes app-update.yml, package-type and the channel files', () => {
    assert.equal(config.publish?.[0]?.provider, 'generic');
    assert.equal(config.publish?.[0]?.channel, 'latest');
  });

  it('builds the zip the Mac updater applies, beside the dmg', () => {
    assert.deepEqual(config.mac.target, ['dmg', 'zip']);
  });

  it('names the Windows publisher, so the updater refuses an installer not signed by it', () => {
    assert.ok((config.win.signtoolOptions?.publisherName ?? []).length > 0);
    assert.equal(config.win.verifyUpdateCodeSignature, true);
  });

  it('installs per user on Windows, so an update needs no administrator (no elevate.exe, no UAC prompt)', () => {
    assert.equal(config.nsis.perMachine, false);
    assert.equal(config.nsis.oneClick, true);
  });
});
