/**
 * The staff panel's back end, the credit ledger and the current-session journal, wired to Electron's
 * `app` (login items, exit, relaunch). The behaviour is operations/staff-ops.ts.
 */
import { app } from 'electron';
import { systemClock } from '../../core/clock.ts';
import { createStaffOps, type StaffOps } from '../../operations/staff-ops.ts';
import { relaunchApp } from '../platform.ts';
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
    start({ kiosk, channels, settings, lifecycle, logger, mainLog }) {
      ops = createStaffOps({
        kiosk,
        channels,
        dataDir: app.getPath('userData'),
        persistence: settings.persistence,
        env: process.env,
        appRoot: app.getAppPath(),
        clock: systemClock,
        logger,
        version: app.getVersion(),
        configError: settings.configError,
        // Said on the PIN pad, where staff read it before they can open the panel.
        settingsNotUsed: settings.configProblems.map((p) => p.line),
        policy: settings.policy,
        logTail: () => mainLog?.tail() ?? [],
        platform: {
          // Electron supports login items on macOS and Windows only.
          getOpenAtLogin: () => (process.platform === 'darwin' || process.platform === 'win32' ? app.getLoginItemSettings().openAtLogin : null),
          setOpenAtLogin: (enabled) => app.setLoginItemSettings({ openAtLogin: enabled }),
          exitKiosk: () => void lifecycle.requestQuit('other'),
          restart: () => {
            relaunchApp();
            void lifecycle.requestQuit('other');
          },
        },
      });
    },
  };
}
