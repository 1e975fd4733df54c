/**
 * A session left over by a crash (power cut, kill) is checked and hung up before the attract screen, so
 * it stops billing; the outcome goes into the ledger (operations/recovery.ts).
 */
import type { StaffOps } from '../../operations/staff-ops.ts';
import type { Feature } from './feature.ts';

/** Recovery must not keep the attract screen away for long. */
const RECOVERY_TIMEOUT_MS = 20_000;

export function crashRecovery(staff: { readonly ops: StaffOps | null }): Feature {
  return {
    name: 'crash recovery',
    async start({ logger }) {
      const ops = staff.ops;
      if (!ops) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        ops.recover().catch((e: unknown) => logger.error('Crash recovery failed', { error: String(e) })),
        new Promise<void>((resolve) => (timer = setTimeout(() => (logger.warn('Crash recovery is slow; showing the kiosk anyway'), resolve()), RECOVERY_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
    },
  };
}
