/**
 * What `npm run mutate` mutates, and with which tests. A folder is split into groups of files that are
 * tested together (no file in two groups); each group runs on its own, one after the other, so the machine
 * is never asked for more than one Stryker at a time, a group can be rerun alone after a change, and each
 * keeps its own incremental file. The score of a folder adds up the latest reports of its groups.
 *
 * Test lists are the tests that exercise the folder: the unit tests of its modules and the integration
 * tests that drive it through a real emulator, broker or file system. The TAP runner measures which test
 * file reaches which mutant in the dry run, so a mutant only runs the files that reach it.
 */
export interface MutationGroup {
  /** Name on the command line and in the report. */
  name: string;
  /** The folder whose score this group counts towards. */
  folder: string;
  /** What the group covers, in a few words. */
  title: string;
  /** Source files to mutate, or the files of the folder that no other group of the folder names. */
  mutate: string[] | 'rest of folder';
  /** Test files, relative to the repository. */
  tests: string[];
  /** Score the group must reach (per cent of the mutants that can change behaviour). */
  target: number;
}

const CORE = 'electron/core/';
const KIOSK = 'electron/kiosk/';
const OPERATIONS = 'electron/operations/';
const FLEET = 'electron/fleet/';

const CONTROLLER_TESTS = [
  'test/unit/core/session-controller-start.test.ts',
  'test/unit/core/session-controller-effects.test.ts',
  'test/unit/core/session-controller-hold.test.ts',
  'test/unit/core/session-helpers.test.ts',
  'test/unit/core/session-controller-hangup-frames.test.ts',
  'test/unit/core/session-controller-final-record.test.ts',
  'test/unit/core/session-controller-timers.test.ts',
  'test/unit/core/session-controller-loss-errors.test.ts',
  'test/unit/core/session-controller-emit.test.ts',
  'test/unit/core/session-controller.property.test.ts',
  'test/integration/session-controller.test.ts',
  'test/integration/probe-fatal.test.ts',
];

export const GROUPS: MutationGroup[] = [
  {
    name: 'session',
    folder: CORE,
    title: 'session machine and reconnect policy',
    mutate: ['electron/core/session-machine.ts', 'electron/core/session-machine-types.ts', 'electron/core/reconnect-policy.ts'],
    tests: [
      'test/unit/core/session-machine.test.ts',
      'test/unit/core/session-machine-held.test.ts',
      'test/unit/core/session-machine.property.test.ts',
      'test/unit/core/reconnect-policy.test.ts',
    ],
    target: 95,
  },
  {
    name: 'core-controller',
    folder: CORE,
    title: 'the session controller (driver of the machine)',
    mutate: ['electron/core/session-controller.ts', 'electron/core/session-controller-options.ts', 'electron/core/session-read-back.ts', 'electron/core/timer-slots.ts'],
    tests: CONTROLLER_TESTS,
    target: 95,
  },
  {
    name: 'core-socket',
    folder: CORE,
    title: 'control socket, protocol frames, transport',
    mutate: ['electron/core/control-socket.ts', 'electron/core/protocol.ts', 'electron/core/protocol-constants.ts', 'electron/core/transport.ts', 'electron/core/remote-hangup.ts', 'electron/core/rtc-ids.ts'],
    tests: [
      'test/unit/core/control-socket.test.ts',
      // The keep-alive's styles, refusals and probe as the control socket sends and reads them.
      'test/unit/core/keep-alive.test.ts',
      'test/unit/core/protocol.test.ts',
      'test/unit/core/remote-hangup.test.ts',
      'test/unit/core/rtc-ids.test.ts',
      'test/unit/core/transport.test.ts',
      'test/unit/renderer/rtc-web-types.test.ts',
      'test/integration/recovery-paths.test.ts',
      'test/integration/session-controller.test.ts',
      'test/integration/probe-fatal.test.ts',
    ],
    target: 95,
  },
  {
    name: 'core-http',
    folder: CORE,
    title: 'REST client, warm HTTP, errors',
    mutate: ['electron/core/rest-client.ts', 'electron/core/warm-http.ts', 'electron/core/request-cache.ts', 'electron/core/bounded-read.ts', 'electron/core/errors.ts'],
    tests: [
      'test/unit/core/rest-client.test.ts',
      'test/unit/core/errors.test.ts',
      'test/unit/core/bounded-read.test.ts',
      'test/unit/core/request-cache.test.ts',
      'test/unit/core/warm-http.test.ts',
      'test/unit/core/avatar-input.test.ts',
      'test/integration/session-controller.test.ts',
      // A tap after a pause, through the kiosk: the warm connection's idle bound against the emulator's close.
      'test/integration/idle-connection.test.ts',
    ],
    target: 95,
  },
  {
    name: 'core-other',
    folder: CORE,
    title: 'avatar input, surface, clock, log, kiosk API',
    mutate: 'rest of folder',
    tests: [
      'test/unit/core/avatar-input.test.ts',
      'test/unit/core/surface.test.ts',
      'test/unit/core/log-secrets.test.ts',
      'test/unit/core/log.test.ts',
      'test/unit/core/messages.test.ts',
      'test/unit/core/clock.test.ts',
      'test/unit/core/kiosk-api.test.ts',
      'test/unit/core/control-socket.test.ts',
      'test/unit/core/proxy-route.test.ts',
      'test/unit/core/proxy-tunnel.test.ts',
      // The proxy agent's idle bound is driven through the warm connection that asks for it.
      'test/unit/core/warm-http.test.ts',
      'test/integration/proxy.test.ts',
      'test/integration/browser-host.test.ts',
      'test/unit/core/keep-alive.test.ts',
      'test/unit/core/user-folders.test.ts',
      'test/unit/core/funnel.test.ts',
      'test/unit/core/csv.test.ts',
      'test/unit/core/wire-report.test.ts',
      'test/unit/core/wire-recorder.test.ts',
      'test/integration/wire-report.test.ts',
      // The funnel's schema and the CSV writer are read through the kiosk's funnel, the ledger's export
      // and the console's visitors; the user folders through the browser host's start decision.
      'test/unit/kiosk/visitor-funnel.test.ts',
      'test/unit/kiosk/visitor-funnel-export.test.ts',
      'test/unit/operations/ledger.test.ts',
      'test/unit/fleet/console/visitors.test.ts',
      'test/unit/browser/start-decision.test.ts',
    ],
    target: 95,
  },
  {
    name: 'kiosk-session',
    folder: KIOSK,
    title: "the kiosk's session paths (the call orchestrator and the services a call runs through, spare.ts)",
    mutate: [
      'electron/kiosk/call-orchestrator.ts',
      'electron/kiosk/call-session.ts',
      'electron/kiosk/call-states.ts',
      'electron/kiosk/spare-adoption.ts',
      'electron/kiosk/spare.ts',
      'electron/kiosk/call-telemetry.ts',
      'electron/kiosk/service-connection.ts',
      'electron/kiosk/service-key.ts',
      'electron/kiosk/availability.ts',
      'electron/kiosk/events.ts',
      'electron/kiosk/compose.ts',
    ],
    tests: [
      'test/unit/kiosk/call-states.test.ts',
      'test/unit/kiosk/call-start.test.ts',
      'test/unit/kiosk/call-orchestrator.test.ts',
      'test/unit/kiosk/call-telemetry.test.ts',
      'test/unit/kiosk/availability.test.ts',
      'test/unit/kiosk/kiosk-operations.test.ts',
      'test/unit/kiosk/before-a-call.test.ts',
      'test/unit/kiosk/spare-adoption.test.ts',
      'test/unit/kiosk/operator-log.test.ts',
      'test/unit/kiosk/service-connection.test.ts',
      'test/unit/kiosk/service-key.test.ts',
      'test/unit/kiosk/compose.test.ts',
      'test/unit/kiosk/spare.test.ts',
      'test/unit/kiosk/spare-shutdown.test.ts',
      'test/unit/operations/max-call.test.ts',
      'test/unit/kiosk/quit.test.ts',
      'test/unit/kiosk/service-health.test.ts',
      'test/unit/kiosk/visitor-funnel-store.test.ts',
      'test/integration/kiosk-service.test.ts',
      'test/integration/spare.test.ts',
      'test/integration/spare-key-change.test.ts',
      'test/integration/visitor-funnel.test.ts',
      'test/integration/audience-wire.test.ts',
    ],
    target: 95,
  },
  {
    name: 'kiosk-other',
    folder: KIOSK,
    title: 'the other kiosk modules (channels, appearance, config, lifecycle, companion, cast …)',
    mutate: 'rest of folder',
    // The schema files' own tests first (config.ts, fleet-config.ts and safety-config.ts run when anything
    // imports the config, so every file below reaches their schemas), then each module's own unit file,
    // quick ones first, then the unit files that compose a whole kiosk, the fleet's unit files that use the
    // schemas, and the two integration files that are the tests of a module here (the channels' staff
    // lock, the cast). A mutant's files run in this order and stop at the first failure. Integration files
    // that compose a whole kiosk (audience-wire, keep-alive-adapt, browser-host, visitor-funnel) are left
    // out: every module here has its own unit file, and each of them would run for nearly every mutant
    // that lives.
    tests: [
      'test/unit/kiosk/config.test.ts',
      'test/unit/kiosk/fleet-config.test.ts',
      'test/unit/kiosk/safety.test.ts',
      'test/unit/kiosk/config-keeping.test.ts',
      'test/unit/kiosk/demo-devices.test.ts',
      'test/unit/kiosk/fatal.test.ts',
      'test/unit/kiosk/page-headers.test.ts',
      'test/unit/kiosk/renderer-recovery.test.ts',
      'test/unit/kiosk/call-figures.test.ts',
      'test/unit/kiosk/quit.test.ts',
      'test/unit/kiosk/lifecycle-unattended.test.ts',
      'test/unit/kiosk/keep-alive-store.test.ts',
      'test/unit/kiosk/os-integration.test.ts',
      'test/unit/kiosk/companion.test.ts',
      'test/unit/kiosk/channels.test.ts',
      'test/unit/kiosk/autostart.test.ts',
      'test/unit/kiosk/avatar-volume.test.ts',
      'test/unit/kiosk/visitor-funnel.test.ts',
      'test/unit/kiosk/visitor-funnel-export.test.ts',
      'test/unit/kiosk/appearance.test.ts',
      'test/unit/core/avatar-input.test.ts',
      'test/unit/kiosk/visitor-funnel-store.test.ts',
      'test/unit/kiosk/service-health.test.ts',
      'test/unit/fleet/managed-config.test.ts',
      'test/unit/fleet/fleet-link-parts.test.ts',
      'test/unit/fleet/opening-hours.test.ts',
      'test/unit/fleet/opening-hours-lookahead.test.ts',
      'test/unit/fleet/update-policy.test.ts',
      'test/unit/fleet/signed-feed.test.ts',
      'test/unit/fleet/safe-updates-decisions.test.ts',
      'test/unit/fleet/mqtt-link-connect.test.ts',
      'test/integration/cast.test.ts',
      'test/integration/contract-wiring.test.ts',
    ],
    target: 90,
  },
  {
    name: 'operations-logic',
    folder: OPERATIONS,
    title: 'ledger, settings, staff PIN, log file (unit tests)',
    mutate: ['electron/operations/ledger.ts', 'electron/operations/settings.ts', 'electron/operations/staff-pin.ts', 'electron/operations/log-file.ts'],
    tests: [
      'test/unit/operations/ledger.test.ts',
      'test/unit/operations/log-file.test.ts',
      'test/unit/operations/settings.test.ts',
      'test/unit/operations/staff-pin.test.ts',
      'test/integration/ledger-crash.test.ts',
    ],
    target: 90,
  },
  {
    name: 'operations-host',
    folder: OPERATIONS,
    title: 'recovery, staff operations, network check, doctor (through the kiosk)',
    mutate: 'rest of folder',
    tests: [
      'test/unit/operations/doctor-report.test.ts',
      'test/unit/operations/network-check-session.test.ts',
      'test/unit/operations/staff-ops-setup-wiring.test.ts',
      'test/unit/operations/staff-ops-api-handlers.test.ts',
      'test/unit/operations/staff-ops-api-settings.test.ts',
      'test/unit/operations/staff-ops-api-recovery.test.ts',
      'test/unit/operations/recovery-journal.test.ts',
      'test/unit/operations/recovery-leftover.test.ts',
      'test/unit/operations/data-lock.test.ts',
      'test/unit/operations/max-call.test.ts',
      'test/integration/network-check.test.ts',
      'test/integration/recovery-paths.test.ts',
      'test/integration/staff-ops.test.ts',
      // The staff panel's recorded service check (wire-check.ts), through the kiosk and the emulator.
      'test/integration/wire-report.test.ts',
      'test/integration/cli-ops.test.ts',
      'test/integration/cli-key.test.ts',
    ],
    target: 90,
  },
  {
    name: 'fleet-logic',
    folder: FLEET,
    title: 'commands, event queue, managed config, opening hours, update policy (unit tests)',
    mutate: ['electron/fleet/commands.ts', 'electron/fleet/event-queue.ts', 'electron/fleet/managed-config.ts', 'electron/fleet/opening-hours.ts', 'electron/fleet/update-policy.ts'],
    tests: [
      'test/unit/fleet/fleet-link-parts.test.ts',
      'test/unit/fleet/managed-config.test.ts',
      'test/unit/fleet/opening-hours.test.ts',
      'test/unit/fleet/update-policy.test.ts',
      'test/unit/fleet/event-queue.test.ts',
      'test/unit/fleet/commands.test.ts',
      'test/unit/fleet/update-install-model.test.ts',
      'test/unit/fleet/event-queue-disk.test.ts',
      'test/unit/fleet/opening-hours-lookahead.test.ts',
    ],
    target: 90,
  },
  {
    name: 'fleet-link',
    folder: FLEET,
    title: 'MQTT link and its table of commands, metrics, fleet host, safe updates (through a real broker)',
    mutate: ['electron/fleet/mqtt-link.ts', 'electron/fleet/command-table.ts', 'electron/fleet/metrics.ts', 'electron/fleet/fleet-host.ts', 'electron/fleet/safe-updates.ts'],
    tests: [
      'test/unit/fleet/commands.test.ts',
      'test/unit/fleet/fleet-link-parts.test.ts',
      'test/unit/fleet/mqtt-link-connect.test.ts',
      'test/unit/fleet/mqtt-link-status.test.ts',
      'test/unit/fleet/mqtt-link-commands.test.ts',
      'test/unit/fleet/safe-updates-decisions.test.ts',
      'test/unit/fleet/metrics-exposition.test.ts',
      'test/unit/fleet/metrics-server.test.ts',
      'test/integration/fleet-host.test.ts',
      'test/integration/metrics-host.test.ts',
      'test/integration/metrics.test.ts',
      // The slowest last: a mutant's files run in this order and stop at the first failure.
      'test/packaging/safe-updates.test.ts',
      'test/integration/mqtt-link.test.ts',
    ],
    target: 90,
  },
  {
    name: 'fleet-other',
    folder: FLEET,
    title: 'command guard, signed update feed (and what it is for), the fleet console',
    mutate: 'rest of folder',
    // The in-process unit files first, the broker-backed ones after them and the integration tests last: a
    // mutant's files run in this order and stop at the first failure.
    tests: [
      'test/unit/fleet/command-guard.test.ts',
      'test/unit/cli/update-commands.test.ts',
      'test/unit/fleet/update-policy.test.ts',
      'test/unit/fleet/signed-feed.test.ts',
      'test/unit/fleet/feed-binding.test.ts',
      'test/unit/fleet/feed-memory.test.ts',
      'test/unit/fleet/console/state.test.ts',
      'test/unit/fleet/console/metrics.test.ts',
      'test/unit/fleet/console/server.test.ts',
      'test/unit/fleet/console/link.test.ts',
      'test/unit/fleet/console/assembly.test.ts',
      'test/unit/fleet/console/demo-broker.test.ts',
      'test/unit/fleet/console/simulated.test.ts',
      'test/unit/fleet/console/accounts.test.ts',
      'test/unit/fleet/console/command-log.test.ts',
      'test/unit/fleet/console/commander.test.ts',
      'test/unit/fleet/console/journal.test.ts',
      'test/unit/fleet/console/memory.test.ts',
      'test/unit/fleet/console/sessions.test.ts',
      'test/unit/fleet/console/spend.test.ts',
      'test/unit/fleet/console/untrusted-kiosk.test.ts',
      'test/unit/fleet/console/visitors.test.ts',
      'test/integration/fleet-console.test.ts',
      'test/integration/fleet-console-acks.test.ts',
      'test/integration/fleet-prometheus.test.ts',
    ],
    target: 90,
  },
];

/** The globs a group mutates ('rest of folder': the folder minus the files its other groups name). */
export function mutateGlobs(group: MutationGroup): string[] {
  if (group.mutate !== 'rest of folder') return group.mutate;
  const taken = GROUPS.filter((g) => g.folder === group.folder && g !== group).flatMap((g) => (g.mutate === 'rest of folder' ? [] : g.mutate));
  return [`${group.folder}**/*.ts`, ...taken.map((file) => `!${file}`)];
}
