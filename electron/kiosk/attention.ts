/**
 * Start-up problems for staff, without Electron. A kiosk is unattended: a problem found while starting
 * (the config file, the administrator's policy, a cast member, the stored key) must never stop it behind
 * a modal dialog nobody will click. The kiosk runs on safe defaults, and each problem becomes one
 * `AttentionItem`: logged by its finder, counted in /metrics, listed on the staff Status tab, and shown
 * to visitors only as a small marker in the staff corner of the attract screen.
 */
import type { AttentionItem } from '../contract.ts';
import type { ErrorInfo } from '../core/errors.ts';

export interface StartupProblems {
  /** Why the config file could not be read at all (null when it could). */
  configError: ErrorInfo | null;
  /** Settings dropped one by one (kiosk/config-keeping.ts); every other setting applies. */
  configProblems?: ReadonlyArray<{ line: string; message: string; source: string }>;
  /** Where the config file is, when known. */
  configPath: string | null;
  /** One line per refused policy block (fleet/managed-config.ts). */
  policyProblems: readonly string[];
  policyPath: string;
  /** Why the stored API key was not used (null when it was, or when there is none). */
  keyProblem: ErrorInfo | null;
  /** Chromium's sandbox is off (os-integration.ts `sandboxProblem`); null or absent when it is on. */
  sandboxProblem?: string | null;
  /** Keys of the config file this version does not know (config.ts `unknownConfigKeys`). */
  unknownConfigKeys?: readonly string[];
}

/** The problems found before the kiosk's services exist, in the order staff should read them. */
export function startupAttention(p: StartupProblems): AttentionItem[] {
  const items: AttentionItem[] = [];
  if (p.configError) {
    items.push({
      kind: 'config',
      code: p.configError.code,
      message: `${p.configError.message} The kiosk is running on safe defaults; fix ${p.configPath ?? 'config.json in the app\'s data folder'} and restart.`,
    });
  }
  for (const problem of p.configProblems ?? []) {
    const where = problem.source === 'config.json' ? (p.configPath ?? 'config.json in the app\'s data folder') : `the environment variable ${problem.source}`;
    items.push({ kind: 'config', code: 'invalid_config', message: `${problem.line}. ${problem.message} Every other setting applies; fix ${where} and restart.` });
  }
  if (p.unknownConfigKeys?.length) {
    const keys = p.unknownConfigKeys.slice(0, 10).join(', ') + (p.unknownConfigKeys.length > 10 ? ` and ${p.unknownConfigKeys.length - 10} more` : '');
    items.push({
      kind: 'config',
      code: 'invalid_config',
      message: `${p.configPath ?? 'config.json'} has settings this version does not know: ${keys} (written by a newer version, or misspelt). They are ignored and kept in the file; every other setting applies.`,
    });
  }
  for (const problem of p.policyProblems) {
    items.push({ kind: 'policy', code: 'invalid_config', message: `${problem} The other blocks of ${p.policyPath} apply; ask the administrator to fix the policy file.` });
  }
  if (p.keyProblem) items.push({ kind: 'key', code: p.keyProblem.code, message: p.keyProblem.message });
  if (p.sandboxProblem) items.push({ kind: 'sandbox', code: 'invalid_config', message: p.sandboxProblem });
  return items;
}

/** A bad cast member is left out of the attract screen; the others are available. */
export function castAttention(problems: readonly ErrorInfo[]): AttentionItem[] {
  return problems.map((p) => ({ kind: 'cast', code: p.code, message: `${p.message} The other avatars are available; fix the configuration and restart.` }));
}
