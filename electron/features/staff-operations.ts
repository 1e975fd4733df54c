/**
 * The staff panel's back end, the credit ledger and the current-session journal (operations/staff-ops.ts),
 * with the host's start-at-login, exit and restart.
 */
import { createStaffOps, type StaffOps } from '../operations/staff-ops.ts';
import type { Feature } from './feature.ts';

export interface StaffOperationsFeature extends Feature {
  /** The running staff operations (null before start). */
  readonly ops: StaffOps | null;
}

export function staffOperations(): StaffOperationsFeature {
  let ops: StaffOps | null = null;
  return {
    name: 'staff operations',
    get ops() {
      return ops;
    },
    start({ kiosk, channels, settings, host, logger }) {
      ops = createStaffOps({
        kiosk,
        channels,
        dataDir: host.dataDir,
        persistence: settings.persistence,
        env: host.env,
        appRoot: host.appRoot,
        clock: host.clock,
        logger,
        version: host.version,
        configError: settings.configError,
        // Said on the PIN pad, where staff read it before they can open the panel.
        settingsNotUsed: settings.configProblems.map((p) => p.line),
        policy: settings.policy,
        logTail: () => host.logTail(),
        platform: host.platform,
      });
    },
    stop() {
      ops?.dispose();
    },
  };
}
