/**
 * What the Status and System tabs show: main's status (mode, service, whether a key is set — never the
 * key —, version, uptime, today's figures, recent errors, start at login).
 */
import type { AttentionKind, StaffStatus } from '../../../electron/contract.ts';
import { StaffValue, type StaffCalls } from './calls.svelte.ts';

export class KioskStatus extends StaffValue<StaffStatus> {
  constructor(calls: StaffCalls) {
    super(calls, (s) => s.status());
  }

  /** Null until loaded. */
  get status(): StaffStatus | null {
    return this.value;
  }

  /** Main changed one field (start at login): show it without asking again. */
  update(change: Partial<StaffStatus>): void {
    if (this.value) this.value = { ...this.value, ...change };
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
  sandbox: 'Security sandbox',
  visitors: 'Visitor counts',
};
