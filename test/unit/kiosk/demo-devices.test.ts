/**
 * Whether the demo's synthetic microphone and camera were asked for (electron/kiosk/demo-devices.ts): the
 * `--demo-devices` flag anywhere on the command line, or KIOSK_DEMO_DEVICES=1 (spaces around it allowed);
 * anything else is no.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_DEVICES_ENV, DEMO_DEVICES_FLAG, demoDevicesAsked } from '../../../electron/kiosk/demo-devices.ts';

describe('demoDevicesAsked', () => {
  it('the flag and the variable have the documented names', () => {
    assert.equal(DEMO_DEVICES_FLAG, '--demo-devices');
    assert.equal(DEMO_DEVICES_ENV, 'KIOSK_DEMO_DEVICES');
  });

  it('yes with the flag anywhere among the arguments', () => {
    assert.equal(demoDevicesAsked(['electron', '.', '--demo-devices'], {}), true);
    assert.equal(demoDevicesAsked(['--demo-devices', 'x'], { KIOSK_DEMO_DEVICES: '0' }), true);
  });

  it('yes with KIOSK_DEMO_DEVICES=1, spaces around it allowed', () => {
    assert.equal(demoDevicesAsked([], { KIOSK_DEMO_DEVICES: '1' }), true);
    assert.equal(demoDevicesAsked([], { KIOSK_DEMO_DEVICES: ' 1\n' }), true);
  });

  it('no without either: other values, other variables, a flag that only looks alike', () => {
    assert.equal(demoDevicesAsked([], {}), false);
    assert.equal(demoDevicesAsked(['--demo-devices=1', '--demo'], {}), false);
    for (const value of ['0', 'true', 'yes', '', '11']) assert.equal(demoDevicesAsked([], { KIOSK_DEMO_DEVICES: value }), false, value);
    assert.equal(demoDevicesAsked([], { DEMO_DEVICES: '1' }), false);
  });
});
