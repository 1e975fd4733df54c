/** The System tab's actions (start at login, Restart, Exit kiosk) and the Status tab's avatar volume. Their
 *  outcome is the panel's notice. */
import { staffLocale } from '../i18n/locale.svelte.ts';
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

  /** Main keeps the volume (and tells the page, which plays the avatar at it); the tab shows main's answer. */
  async setAvatarVolume(percent: number): Promise<void> {
    const r = await this.#calls.call((s) => s.setAvatarVolume({ percent }));
    this.#calls.notice = r.ok ? staffLocale.t('staff.avatarVolumeSet', { percent: r.value.percent }) : r.error.message;
    if (r.ok) this.#status.update({ avatarVolume: r.value.percent });
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
