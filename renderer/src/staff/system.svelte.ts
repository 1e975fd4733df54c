/** The System tab's actions: start at login, Restart, Exit kiosk. Their outcome is the panel's notice. */
import type { StaffCalls } from './calls.svelte.ts';
import type { KioskStatus } from './status.svelte.ts';

export class SystemActions {
  readonly #calls: StaffCalls;
  readonly #status: KioskStatus;

  /** @param status the tab reads `openAtLogin` from it; a change is written back. */
  constructor(calls: StaffCalls, status: KioskStatus) {
    this.#calls = calls;
    this.#status = status;
  }

  async setOpenAtLogin(enabled: boolean): Promise<void> {
    const r = await this.#calls.call((s) => s.setOpenAtLogin({ enabled }));
    this.#calls.notice = r.ok ? (enabled ? 'The kiosk will start when this computer starts.' : 'The kiosk will no longer start by itself.') : r.error.message;
    if (r.ok) this.#status.update({ openAtLogin: enabled });
  }

  async exitKiosk(): Promise<void> {
    const r = await this.#calls.call((s) => s.exitKiosk());
    this.#calls.notice = r.ok ? 'Closing the kiosk…' : r.error.message;
  }

  async restart(): Promise<void> {
    const r = await this.#calls.call((s) => s.restart());
    this.#calls.notice = r.ok ? 'Restarting…' : r.error.message;
  }
}
