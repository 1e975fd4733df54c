/**
 * A session left over by a crash (power cut, kill) is checked and hung up before the attract screen, so
 * it stops billing; the outcome goes into the ledger (operations/recovery.ts). Bounded: a slow service
 * never keeps the kiosk dark (StaffOps.recoverWithin).
 */
import type { StaffOps } from '../operations/staff-ops.ts';
import type { Feature } from './feature.ts';

export function crashRecovery(staff: { readonly ops: StaffOps | null }): Feature {
  return {
    name: 'crash recovery',
    async start() {
      await staff.ops?.recoverWithin();
    },
  };
}
