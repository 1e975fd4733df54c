/**
 * What the Status and System tabs show: main's status (mode, service, whether a key is set — never the
 * key —, version, uptime, today's figures, recent errors, start at login).
 */
import type { AttentionKind, ErrorInfo, StaffStatus } from '../../../electron/contract.ts';
import type { StaffCalls } from './calls.svelte.ts';

export class KioskStatus {
  readonly #calls: StaffCalls;
  #status = $state<StaffStatus | null>(null);

  constructor(calls: StaffCalls) {
    this.#calls = calls;
  }

  /** Null until loaded. */
  get status(): StaffStatus | null {
    return this.#status;
  }

  /** (Re)load; the error when it could not. */
  async load(): Promise<ErrorInfo | null> {
    const r = await this.#calls.call((s) => s.status());
    if (r.ok) this.#status = r.value;
    return r.ok ? null : r.error;
  }

  /** Main changed one field (start at login): show it without asking again. */
  update(change: Partial<StaffStatus>): void {
    if (this.#status) this.#status = { ...this.#status, ...change };
  }

  clear(): void {
    this.#status = null;
  }
}

/** The API key line of the Status tab: set or not, where from, and how well a stored one is protected. */
export function apiKeyText(s: Pick<StaffStatus, 'hasApiKey' | 'apiKeySource' | 'apiKeyWeaklyProtected'>): string {
  if (!s.hasApiKey) return 'Not set';
  if (s.apiKeySource === 'env') return 'Set (from the environment: AVATAR_API_KEY)';
  if (s.apiKeyWeaklyProtected === true) return 'Set (stored, only weakly protected: the system keyring is not used). Prefer AVATAR_API_KEY.';
  if (s.apiKeyWeaklyProtected === 'unknown') {
    return 'Set (stored, encrypted). On Linux the kiosk cannot tell whether a keyring or a built-in key protects it; on a shared machine prefer AVATAR_API_KEY.';
  }
  return 'Set (stored, encrypted by the system keystore)';
}

/** What each start-up problem is about, as staff read it. */
export const ATTENTION_LABELS: Record<AttentionKind, string> = {
  config: 'Configuration file',
  policy: 'Administrator policy',
  cast: 'Avatar',
  key: 'API key',
};
