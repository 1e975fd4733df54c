/**
 * A kiosk in demo mode (the in-process emulator) with staff operations registered beside it in one channel
 * registry, its settings in a temp config.json and its ledger in a temp folder: what main wires, without
 * Electron.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../electron/core/clock.ts';
import type { EmulatorKnobs } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry, type ChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';
import { systemTimeZone } from '../../electron/kiosk/visitor-funnel.ts';
import { openVisitorFunnelStore } from '../../electron/kiosk/visitor-funnel-store.ts';
import { jsonFilePersistence, type SettingsPersistence } from '../../electron/operations/settings.ts';
import { createStaffOps, type PlatformHooks, type StaffOps } from '../../electron/operations/staff-ops.ts';

export const APP_ROOT = join(import.meta.dirname, '..', '..');
export const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export interface StaffKiosk {
  kiosk: Kiosk;
  /** Every channel, the kiosk's and staff operations', as a host dispatches them. */
  channels: ChannelRegistry;
  ops: StaffOps;
  dataDir: string;
  persistence: SettingsPersistence;
}

export async function createStaffKiosk(options: {
  /** config.json as written before the kiosk starts. */
  file: Record<string, unknown>;
  knobs?: Partial<EmulatorKnobs>;
  platform: PlatformHooks;
  logTail?: () => string[];
  version?: string;
  /** A key stored by the app (as main's store would hold it: `encryptedApiKey` in config.json). */
  storedApiKey?: string;
  /** The administrator's policy layer (managed-config.ts). */
  policy?: { policy: Record<string, unknown>; managedKeys: string[] };
  /** The zone the visitor funnel counts in (default: the system's), kept in the data folder as the hosts do. */
  timeZone?: string;
}): Promise<StaffKiosk> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-staff-'));
  const persistence = jsonFilePersistence(join(dataDir, 'config.json'));
  await persistence.write(options.file);
  const channels = createChannelRegistry();
  const kiosk = await createKiosk({ channels, awaitRendererRtc: false,
    config: resolveConfig(persistence.read(), {}, { appRoot: APP_ROOT }),
    apiKey: options.storedApiKey ?? null,
    apiKeySource: options.storedApiKey ? 'stored' : 'none',
    emulatorKnobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 20, ...options.knobs },
    visitorStore: openVisitorFunnelStore({ dir: dataDir, timeZone: options.timeZone ?? systemTimeZone(), clock: systemClock }),
    persistApiKey: async (key) => {
      const { encryptedApiKey: _old, ...rest } = persistence.read();
      // Stands in for safeStorage's ciphertext: never the key itself.
      await persistence.write(key === null ? rest : { ...rest, encryptedApiKey: Buffer.from('ciphertext').toString('base64') });
    },
  });
  const ops = createStaffOps({
    kiosk,
    channels,
    dataDir,
    persistence,
    env: {},
    appRoot: APP_ROOT,
    clock: systemClock,
    version: options.version ?? '0.0.0-test',
    logTail: options.logTail ?? (() => []),
    platform: options.platform,
    ...(options.policy ? { policy: options.policy } : {}),
  });
  return { kiosk, channels, ops, dataDir, persistence };
}
