/**
 * Accounts of the emulated service: API key → creator id, credit balance and cloned voices. Owns the
 * voice-clone rules (spec §4.4, §4.5, §8: the first `FREE_VOICE_CLONES` per account free, then
 * `VOICE_CLONE_COST` credits each).
 * Session billing lives in sessions.ts; it moves credits through `charge`/`refund` here.
 */
import { createHash } from 'node:crypto';
import {
  DEFAULT_VOICE,
  FREE_VOICE_CLONES,
  TRIAL_CREDITS,
  VOICE_CLONE_COST,
  type CloneVoiceRequest,
} from '../core/protocol.ts';
import { ApiError } from './api-error.ts';
import type { EmulatorAccount } from './types.ts';

/** ASSUMPTION: the spec shows no limit on voice names; 64 characters, no control characters. */
export const MAX_VOICE_NAME_LENGTH = 64;

export interface AccountRecord {
  readonly apiKey: string;
  creatorId: string;
  /** Credits, never negative. */
  balance: number;
  /** Names of this account's cloned voices, in creation order. */
  readonly clones: string[];
}

/** A stable creator id derived from the key (hex only, so `live-user-<creatorID>-<liveID>` stays readable). */
export function creatorIdFor(apiKey: string): string {
  return 'c' + createHash('sha256').update(apiKey).digest('hex').slice(0, 12);
}

export class Accounts {
  readonly #byKey = new Map<string, AccountRecord>();

  /** Add an account, or update the creator id / balance of an existing one. */
  add(account: EmulatorAccount): AccountRecord {
    if (!account.apiKey) throw new Error('An emulator account needs an apiKey.');
    const existing = this.#byKey.get(account.apiKey);
    if (existing) {
      if (account.creatorId !== undefined) existing.creatorId = account.creatorId;
      if (account.balance !== undefined) existing.balance = Math.max(0, account.balance);
      return existing;
    }
    const record: AccountRecord = {
      apiKey: account.apiKey,
      creatorId: account.creatorId ?? creatorIdFor(account.apiKey),
      balance: Math.max(0, account.balance ?? TRIAL_CREDITS), // spec §8
      clones: [],
    };
    this.#byKey.set(record.apiKey, record);
    return record;
  }

  get(apiKey: string): AccountRecord | undefined {
    return this.#byKey.get(apiKey);
  }

  require(apiKey: string): AccountRecord {
    const account = this.#byKey.get(apiKey);
    if (!account) throw new Error(`No emulator account for that key.`);
    return account;
  }

  /** Take up to `credits` from the balance; returns what was actually taken (the balance never goes below 0). */
  charge(account: AccountRecord, credits: number): number {
    const taken = Math.min(account.balance, Math.max(0, credits));
    account.balance -= taken;
    return taken;
  }

  refund(account: AccountRecord, credits: number): void {
    if (credits > 0) account.balance += credits;
  }

  /** spec §4.4: validate, charge (the first `FREE_VOICE_CLONES` free, then `VOICE_CLONE_COST`, §8), remember the name. */
  cloneVoice(account: AccountRecord, request: CloneVoiceRequest): { voice: string } {
    validateAudioUrl(request.audio_url);
    const name = request.voice.trim();
    if (!name) throw new ApiError(400, 'invalid_request', 'voice must not be blank.', 'voice');
    if (name.length > MAX_VOICE_NAME_LENGTH) {
      throw new ApiError(400, 'invalid_request', `voice must be ${MAX_VOICE_NAME_LENGTH} characters or fewer.`, 'voice');
    }
    if (/\p{Cc}/u.test(name)) throw new ApiError(400, 'invalid_request', 'voice must not contain control characters.', 'voice');
    // ASSUMPTION: names are unique per account, case-insensitively, and may not shadow the default built-in voice.
    const lower = name.toLowerCase();
    if (lower === DEFAULT_VOICE.toLowerCase() || account.clones.some((v) => v.toLowerCase() === lower)) {
      throw new ApiError(409, 'conflict', `A voice named "${name}" already exists.`, 'voice');
    }
    if (account.clones.length >= FREE_VOICE_CLONES) {
      if (account.balance < VOICE_CLONE_COST) {
        throw new ApiError(
          402,
          'insufficient_credits',
          `Cloning a voice costs ${VOICE_CLONE_COST} credits after the first ${FREE_VOICE_CLONES}; the balance is ${account.balance}.`,
        );
      }
      account.balance -= VOICE_CLONE_COST;
    }
    account.clones.push(name);
    return { voice: name };
  }

  /** spec §4.5: only the caller's clones, built-in voices excluded. */
  listVoices(account: AccountRecord): { voices: Array<{ voice: string }> } {
    return { voices: account.clones.map((voice) => ({ voice })) };
  }
}

/** spec §4.4: a link to an mp3 or wav sample. */
function validateAudioUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiError(400, 'invalid_request', 'audio_url must be an http(s) URL.', 'audio_url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ApiError(400, 'invalid_request', 'audio_url must be an http(s) URL.', 'audio_url');
  }
  if (!/\.(mp3|wav)$/i.test(url.pathname)) {
    throw new ApiError(400, 'invalid_request', 'audio_url must point to an .mp3 or .wav file.', 'audio_url');
  }
}
