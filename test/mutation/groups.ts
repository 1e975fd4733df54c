/**
 * What `npm run mutate` mutates, and with which tests. One group per folder (plus narrower groups for a
 * quick look at one area); each group runs on its own, one after the other, so the machine is never asked
 * for more than one Stryker at a time and each keeps its own incremental file.
 *
 * Test lists are the tests that exercise the folder: the unit tests of its modules and the integration
 * tests that drive it through a real emulator, broker or file system. The TAP runner measures which test
 * file reaches which mutant in the dry run, so a mutant only runs the files that reach it.
 */
export interface MutationGroup {
  /** Name on the command line and in the report. */
  name: string;
  /** What the figure covers, in a few words. */
  title: string;
  /** Globs of the source files to mutate. */
  mutate: string[];
  /** Test files, relative to the repository. */
  tests: string[];
  /** Score the group must reach (per cent of the mutants that can change behaviour). */
  target: number;
  /** Groups that belong to `npm run mutate` without arguments. The narrower ones run only when named. */
  byDefault: boolean;
}

const SESSION_CORE_TESTS = [
  'test/unit/session-machine.test.ts',
  'test/unit/session-machine.property.test.ts',
  'test/unit/session-machine-mutants.test.ts',
  'test/unit/reconnect-policy.test.ts',
];

export const GROUPS: MutationGroup[] = [
  {
    name: 'session',
    title: 'electron/core session machine and reconnect policy',
    mutate: ['electron/core/session-machine.ts', 'electron/core/reconnect-policy.ts'],
    tests: SESSION_CORE_TESTS,
    target: 95,
    byDefault: false,
  },
  {
    name: 'core',
    title: 'electron/core/',
    mutate: ['electron/core/**/*.ts'],
    tests: [
      ...SESSION_CORE_TESTS,
      'test/unit/avatar-input.test.ts',
      'test/unit/control-socket.test.ts',
      'test/unit/protocol.test.ts',
      'test/unit/rest-client.test.ts',
      'test/unit/session-controller.property.test.ts',
      'test/unit/surface.test.ts',
      'test/unit/warm-http.test.ts',
      'test/unit/log-secrets.test.ts',
      'test/integration/session-controller.test.ts',
      'test/integration/probe-fatal.test.ts',
    ],
    target: 95,
    byDefault: true,
  },
  {
    name: 'kiosk-session',
    title: "the kiosk's session paths (kiosk-service.ts, spare.ts)",
    mutate: ['electron/kiosk/kiosk-service.ts', 'electron/kiosk/spare.ts'],
    tests: [
      'test/unit/kiosk-service.test.ts',
      'test/unit/spare.test.ts',
      'test/unit/max-call.test.ts',
      'test/unit/quit.test.ts',
      'test/integration/kiosk-service.test.ts',
      'test/integration/spare.test.ts',
    ],
    target: 95,
    byDefault: true,
  },
  {
    name: 'kiosk',
    title: 'electron/kiosk/ (the other modules)',
    mutate: ['electron/kiosk/**/*.ts', '!electron/kiosk/kiosk-service.ts', '!electron/kiosk/spare.ts'],
    tests: [
      'test/unit/avatar-input.test.ts',
      'test/unit/companion.test.ts',
      'test/unit/config.test.ts',
      'test/unit/lifecycle-unattended.test.ts',
      'test/unit/os-integration.test.ts',
      'test/unit/fleet-link-parts.test.ts',
      'test/unit/managed-config.test.ts',
      'test/integration/cast.test.ts',
      'test/integration/contract-wiring.test.ts',
    ],
    target: 90,
    byDefault: true,
  },
  {
    name: 'operations',
    title: 'electron/operations/',
    mutate: ['electron/operations/**/*.ts'],
    tests: [
      'test/unit/ledger.test.ts',
      'test/unit/log-file.test.ts',
      'test/unit/settings.test.ts',
      'test/unit/staff-pin.test.ts',
      'test/integration/ledger-crash.test.ts',
      'test/integration/network-check.test.ts',
      'test/integration/recovery-paths.test.ts',
      'test/integration/staff-ops.test.ts',
    ],
    target: 90,
    byDefault: true,
  },
  {
    name: 'fleet',
    title: 'electron/fleet/',
    mutate: ['electron/fleet/**/*.ts'],
    tests: [
      'test/unit/fleet-link-parts.test.ts',
      'test/unit/managed-config.test.ts',
      'test/unit/opening-hours.test.ts',
      'test/unit/update-policy.test.ts',
      'test/integration/fleet-host.test.ts',
      'test/integration/metrics.test.ts',
      'test/integration/mqtt-link.test.ts',
      'test/integration/safe-updates.test.ts',
    ],
    target: 90,
    byDefault: true,
  },
];
