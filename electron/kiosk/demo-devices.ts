/**
 * The demo's synthetic microphone and camera are asked for with `--demo-devices` (`npm start --
 * --demo-devices`) or KIOSK_DEMO_DEVICES=1; both hosts read it here. The service honours it in demo mode
 * only (PublicConfig.demoDevices), and the renderer makes the devices (renderer/src/rtc/demo-devices.ts).
 */
export const DEMO_DEVICES_FLAG = '--demo-devices';
export const DEMO_DEVICES_ENV = 'KIOSK_DEMO_DEVICES';

/** Whether the synthetic devices were asked for (the flag, or KIOSK_DEMO_DEVICES=1). */
export function demoDevicesAsked(argv: readonly string[], env: Record<string, string | undefined>): boolean {
  return argv.includes(DEMO_DEVICES_FLAG) || env[DEMO_DEVICES_ENV]?.trim() === '1';
}
