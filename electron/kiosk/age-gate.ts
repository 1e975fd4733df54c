/**
 * The age gate before every call on an adult kiosk (docs/safety.md). A visitor's tap opens it
 * (`ask`); the visitor's "yes" (`answer`, `ageCheck: self`) or a member of staff with the PIN
 * (`staffUnlock`, `ageCheck: staff`) gives a pass for one call, which the call's start takes (`admit`).
 * Without a pass an adult kiosk creates nothing: no session, and no spare either (compose.ts keeps spares
 * off on an adult kiosk, because a spare's create body would carry `moderation: "disabled"`).
 * A public kiosk has no gate: `admit` always lets the start through.
 *
 * A pass lasts `PASS_TTL_MS`: the page starts the call right after the answer, so an unused pass means
 * the visitor left (the next visitor must answer again).
 */
import type { AgeGateTicket } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';
import type { AgeGateCounter } from './age-gate-counts.ts';
import type { SafetyPosture } from './safety-config.ts';

export const PASS_TTL_MS = 60_000;
export const GATE_CLOSED_MESSAGE = 'This kiosk is for adults: each call starts only after the age gate is passed.';
export const STAFF_CHECK_MESSAGE = 'On this kiosk a member of staff checks the age: staff unlock each call with the PIN.';

export interface AgeGate {
  ask(): AgeGateTicket;
  answer(confirmed: boolean): { passed: boolean };
  staffUnlock(): { passed: boolean };
  /** Why a call may not start now (null: it may; a pass, if any, is used up). */
  admit(): string | null;
}

export function createAgeGate(options: { posture: () => SafetyPosture; counts: AgeGateCounter; clock: Clock }): AgeGate {
  const { counts, clock } = options;
  let passUntilMs: number | null = null;
  const gate = () => options.posture().ageGate;
  const grant = () => {
    counts.count('confirmed');
    passUntilMs = clock.now() + PASS_TTL_MS;
    return { passed: true };
  };
  return {
    ask() {
      const g = gate();
      if (!g) return { required: false };
      passUntilMs = null; // a new visitor: an earlier pass is not theirs
      counts.count('asked');
      return { required: true, minimumAge: g.minimumAge, ageCheck: g.ageCheck };
    },
    answer(confirmed) {
      const g = gate();
      if (!g) throw new AvatarError('invalid_request', 'This kiosk has no age gate.');
      if (!confirmed) {
        passUntilMs = null;
        counts.count('declined');
        return { passed: false };
      }
      if (g.ageCheck === 'staff') throw new AvatarError('forbidden', STAFF_CHECK_MESSAGE);
      return grant();
    },
    staffUnlock() {
      if (!gate()) throw new AvatarError('invalid_request', 'This kiosk has no age gate.');
      return grant();
    },
    admit() {
      if (!gate()) return null;
      const ok = passUntilMs !== null && clock.now() <= passUntilMs;
      passUntilMs = null;
      return ok ? null : GATE_CLOSED_MESSAGE;
    },
  };
}
