/**
 * The fleet link (electron/fleet/mqtt-link.ts) started against a scripted broker in the test process
 * (fake-mqtt-broker.ts), on a StrictClock, with a recording logger and a FleetControl that notes what it
 * is asked to do. The test plays the operator: it delivers commands and reads the exact packets the
 * kiosk sent.
 */
import { afterEach } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandName } from '../../electron/fleet/commands.ts';
import { startMqttLink, type FleetControl, type FleetStatusFields, type FleetUpdates, type MqttLink, type MqttLinkOptions } from '../../electron/fleet/mqtt-link.ts';
import { mqttSchema } from '../../electron/kiosk/fleet-config.ts';
import { FakeMqttBroker } from './fake-mqtt-broker.ts';
import { recordingLogger } from './recording-logger.ts';
import { StrictClock } from './fake-clock.ts';
import { until } from './until.ts';

export const KIOSK = 'lobby-1';
export const PREFIX = 'ak';
export const T = {
  status: `${PREFIX}/${KIOSK}/status`,
  events: `${PREFIX}/${KIOSK}/events`,
  cmd: `${PREFIX}/${KIOSK}/cmd`,
  result: `${PREFIX}/${KIOSK}/cmd/result`,
  fleetCmd: `${PREFIX}/_fleet/cmd`,
};
/** The StrictClock's start, as the link writes it in `at`. */
export const START_ISO = new Date(new StrictClock().now()).toISOString();

/** A FleetControl whose every call is noted in `did`; each behaviour can be replaced per test. */
export interface RecordingControl extends FleetControl {
  did: string[];
  calling: boolean;
}

export function recordingControl(overrides: Partial<FleetControl> = {}): RecordingControl {
  const control: RecordingControl = {
    did: [],
    calling: false,
    inCall: () => control.calling,
    async endCall() {
      control.did.push('end-call');
      control.calling = false;
    },
    reload: () => void control.did.push('reload'),
    restart: () => void control.did.push('restart'),
    async screenshot() {
      control.did.push('screenshot');
      return { png: Buffer.from('PNG!'), width: 4, height: 3 };
    },
    async apply(settings) {
      control.did.push('apply');
      return { applied: Object.keys(settings).sort() };
    },
    ...overrides,
  };
  return control;
}

export function statusFields(overrides: Partial<FleetStatusFields> = {}): FleetStatusFields {
  return { version: '1.2.3', mode: 'demo', phase: 'idle', cast: ['ava'], open: true, nextChangeAt: null, today: { sessions: 0, credits: 0 }, lastErrorCode: null, ...overrides };
}

export interface LinkRig {
  broker: FakeMqttBroker;
  link: MqttLink;
  clock: StrictClock;
  logger: ReturnType<typeof recordingLogger>;
  control: RecordingControl;
  /** What `status()` returns; change it and call `link.statusChanged()`. */
  fields: FleetStatusFields;
  dir: string;
  /** Deliver a command on `topic` (the kiosk's own by default, with a 60 s message expiry) and wait for the answer on cmd/result. */
  command(body: unknown, options?: { topic?: string; retain?: boolean; expirySeconds?: number | null }): Promise<Record<string, unknown>>;
  /** The answers published so far. */
  answers(): Array<Record<string, unknown>>;
}

export interface RigOptions {
  settings?: Record<string, unknown>;
  control?: Partial<FleetControl>;
  fields?: Partial<FleetStatusFields>;
  /** Options of startMqttLink to set or replace (settings, control and status come from the rig). */
  link?: Partial<MqttLinkOptions>;
  /** Script the broker before the link connects. */
  broker?: (broker: FakeMqttBroker) => void;
  /** Wait for the subscription (the link is up and takes commands); default true. */
  waitReady?: boolean;
  dir?: string;
}

/**
 * Registers (in the calling test file) an `afterEach` that closes every link and broker started in the
 * test and removes their folders, and returns the function that starts one: a link against a new fake
 * broker.
 */
export function linkRigsClosedAfterEach(): (options?: RigOptions) => Promise<LinkRig> {
  const rigs: LinkRig[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const r of rigs.splice(0)) {
      // A PUBACK still held back would keep the client's end waiting for it.
      r.broker.puback = () => 0;
      r.broker.releasePubacks();
      await r.link.close();
      await r.broker.close();
    }
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return (options) => startLinkRig(options ?? {}, rigs, dirs);
}

async function startLinkRig(options: RigOptions, rigs: LinkRig[], dirs: string[]): Promise<LinkRig> {
  const broker = await FakeMqttBroker.start();
  options.broker?.(broker);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ak-link-'));
  if (!options.dir) dirs.push(dir);
  const clock = new StrictClock();
  const logger = recordingLogger();
  const control = recordingControl(options.control);
  const fields = statusFields(options.fields);
  const link = startMqttLink({
    settings: mqttSchema.parse({ url: broker.url, topicPrefix: PREFIX, ...options.settings }),
    kioskId: KIOSK,
    dataDir: dir,
    status: () => ({ ...fields }),
    control,
    clock,
    logger,
    reconnectMs: 20,
    commandRate: { burst: 1000, refillMs: 1 },
    ...options.link,
  });
  const answers = () => broker.published(T.result).map((p) => p.body as Record<string, unknown>);
  const rig: LinkRig = {
    broker,
    link,
    clock,
    logger,
    control,
    fields,
    dir,
    answers,
    async command(body, o = {}) {
      const before = answers().length;
      const expiry = o.expirySeconds === undefined ? 60 : o.expirySeconds;
      broker.deliver(o.topic ?? T.cmd, typeof body === 'string' ? body : JSON.stringify(body), {
        retain: o.retain ?? false,
        ...(expiry === null ? {} : { properties: { messageExpiryInterval: expiry } }),
      });
      await until(() => answers().length > before, { message: `an answer to ${JSON.stringify(body)}` });
      return answers()[before]!;
    },
  };
  rigs.push(rig);
  if (options.waitReady ?? true) await until(() => broker.packets('subscribe').length > 0, { message: 'the link subscribed' });
  return rig;
}

/** FleetUpdates that note each call in `did` (the update commands' target). */
export function recordingUpdates(did: string[], overrides: Partial<FleetUpdates> = {}): FleetUpdates {
  return {
    status: { phase: 'idle', model: 'appimage', off: null, ready: null, pinned: null, floor: null, installWhenIdle: false, lastCheckAt: null, lastError: null },
    async check() {
      did.push('check');
    },
    installWhenIdle() {
      did.push('install');
    },
    async pin(version) {
      did.push(`pin ${version}`);
    },
    ...overrides,
  };
}

export type { CommandName };
