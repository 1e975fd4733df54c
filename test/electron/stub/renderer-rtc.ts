/**
 * The renderer's part of a call, for harnesses that run main without a renderer: once a session's RTC
 * credentials have been sent, it reports that side ready (at once: no RTC SDK here), so main sends
 * conn_init. Polls the events main sent; the timer does not keep the process alive.
 */
import type { KioskEvent } from '../../../electron/contract.ts';

export function stubRendererRtc(events: () => KioskEvent[], invoke: (channel: string, arg: unknown) => Promise<unknown>): void {
  let credentialsSeen = 0;
  const timer = setInterval(() => {
    const credentials = events().filter((e): e is Extract<KioskEvent, { type: 'credentials' }> => e.type === 'credentials');
    for (; credentialsSeen < credentials.length; credentialsSeen++) void invoke('kiosk:session:rtc-ready', { liveId: credentials[credentialsSeen]!.liveId });
  }, 20);
  timer.unref();
}
