/**
 * What a kiosk publishes for the fleet console, as the JSON text that arrives over MQTT: its retained
 * status (or its last will), a ledger event's envelope and a command answer. For the console-state tests.
 */
import type { LedgerRecord } from '../../electron/operations/ledger.ts';

/** The console's clock at the start of a test, and the end of the calls the kiosk reports. */
export const T0 = Date.parse('2026-11-24T10:00:00Z');

/** A kiosk's online status (the link's FleetStatus fields), with `extra` on top. */
export const onlineStatus = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ online: true, kioskId: 'k', group: 'lobby', version: '1.2.3', mode: 'direct', phase: 'idle', cast: ['ava'], open: true, nextChangeAt: null, today: { sessions: 3, credits: 7.5 }, lastErrorCode: null, queued: 0, at: new Date(T0).toISOString(), ...extra });

/** An offline status (a last will or a clean stop); no reason leaves it out. */
export const offlineStatus = (reason?: string): string => JSON.stringify({ online: false, kioskId: 'k', ...(reason === undefined ? {} : { reason }) });

/** One ledger record as `<kiosk>/events` carries it. */
export const eventPayload = (id: string, record: LedgerRecord | Record<string, unknown>): string => JSON.stringify({ id, kioskId: 'k', at: new Date(T0).toISOString(), record });

/** A command answer from `<kiosk>/cmd/result`. */
export const resultPayload = (answer: Record<string, unknown>): string => JSON.stringify({ id: 'c-1', cmd: 'reload', at: new Date(T0).toISOString(), ...answer });

/** The smallest PNG: one pixel (what a kiosk's screenshot answer carries, base64). */
export const PNG_1x1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
