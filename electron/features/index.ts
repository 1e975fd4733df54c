/**
 * The features that run alongside the kiosk's services, one list for both hosts (the Electron app and the
 * browser mode): started in this order before the page loads, stopped in reverse when the kiosk stops.
 * Adding a feature is one line here; what it needs of a host it asks through KioskHost (host.ts).
 */
import { crashRecovery } from './crash-recovery.ts';
import { desktopCompanion } from './desktop-companion.ts';
import type { Feature } from './feature.ts';
import { fleetLink } from './fleet-link.ts';
import { fleetMetrics } from './fleet-metrics.ts';
import { keepAwake } from './keep-awake.ts';
import { safeUpdates } from './safe-updates.ts';
import { staffOperations, type StaffOperationsFeature } from './staff-operations.ts';

export type { Feature, FeatureContext } from './feature.ts';
export type { HostSettings, HostWindow, HostUpdater, KioskHost, CompanionOptions } from './host.ts';

export interface KioskFeatures {
  readonly list: readonly Feature[];
  /** Staff operations, for a host that hands them on (the browser mode's tests read its ledger and PIN). */
  readonly staff: StaffOperationsFeature;
}

export function kioskFeatures(): KioskFeatures {
  const staff = staffOperations();
  const metrics = fleetMetrics();
  const fleet = fleetLink(staff, metrics);
  return {
    staff,
    list: [
      keepAwake(),
      staff,
      // After staff operations: recovery records into their ledger.
      crashRecovery(staff),
      metrics,
      // After the ledger and the metrics: it forwards the one and adds the opening gauge to the other.
      fleet,
      safeUpdates(fleet),
      desktopCompanion(),
    ],
  };
}
