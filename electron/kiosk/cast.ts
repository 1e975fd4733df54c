/**
 * A cast of avatars: checking each member's image before anyone picks it, and the attract
 * screen's view of the cast, and what a call with one member is created with. Electron-free; the kiosk's
 * appearance (appearance.ts) and the call orchestrator use it.
 *
 * Every member with a local or data: image is checked once at start-up with the same code a session uses
 * (core/avatar-input.ts: type by magic bytes, the `MAX_BASE64_IMAGE_BYTES` bound, a non-empty persona), so a bad image is
 * reported naming the avatar (`avatars.2 ("Kim"): …`) instead of failing a visitor's call later.
 * A bad member is left out of the attract screen's cast; when every member is bad, the cast keeps them
 * all (the screen needs someone) and starting a call answers with the member's error.
 */
import { buildCreateRequest, type AvatarInputDeps } from '../core/avatar-input.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import type { CastMember, LanguageCode, VideoFit } from '../contract.ts';
import type { CallMode } from '../core/protocol.ts';
import type { StartOptions } from '../core/session-types.ts';
import { personaFor, type CastEntry, type KioskConfig } from './config.ts';

/** Check every member; the answer maps a bad member's id to its error (empty when all are fine). */
export async function checkCast(cast: readonly CastEntry[], deps: AvatarInputDeps = {}): Promise<Map<string, AvatarError>> {
  const problems = new Map<string, AvatarError>();
  await Promise.all(
    cast.map(async (member, index) => {
      try {
        await buildCreateRequest({ callMode: member.callMode, avatar: { persona: member.persona, image: member.imagePath, name: member.name, voice: member.voice } }, deps);
      } catch (error) {
        const e = toAvatarError(error, 'invalid_config');
        problems.set(
          member.id,
          new AvatarError('invalid_config', `The avatar "${member.name}" (avatars.${index}, id "${member.id}") cannot be used: ${e.message}`, {
            cause: error,
            details: { field: `avatars.${index}`, avatarId: member.id },
          }),
        );
      }
    }),
  );
  return problems;
}

/** The members a visitor may pick: the good ones, or everyone when none is good. */
export function usableCast(cast: readonly CastEntry[], problems: ReadonlyMap<string, AvatarError>): CastEntry[] {
  const good = cast.filter((m) => !problems.has(m.id));
  return good.length ? good : [...cast];
}

export function publicCast(cast: readonly CastEntry[], images: ReadonlyMap<string, string | null>): CastMember[] {
  return cast.map((m) => ({ id: m.id, name: m.name, imageDataUrl: images.get(m.id) ?? null, callMode: m.callMode, greeting: m.greeting, gender: m.gender }));
}

/** `video.fit` from the config, else `cover` on a portrait screen (the face fills it) and `contain` otherwise. */
export function resolveVideoFit(config: Pick<KioskConfig, 'video'>, portrait: boolean): VideoFit {
  return config.video?.fit ?? (portrait ? 'cover' : 'contain');
}

/**
 * Whether the avatar's screen is portrait: the display in kiosk mode (when known), the companion's size
 * in companion mode, the configured window otherwise.
 */
export function configuredPortrait(config: Pick<KioskConfig, 'window' | 'companion'>, display?: { width: number; height: number }): boolean {
  if (config.window.mode === 'kiosk' && display) return display.height > display.width;
  if (config.window.mode === 'companion') return config.companion.height > config.companion.width;
  return config.window.height > config.window.width;
}

/** What a session is created with: a spare is pre-warmed for the cast's first member in its call mode and
 *  the default language, so a tap on another avatar, mode or language does not match it (the spare is
 *  closed, the normal path runs). The language reaches the avatar as an instruction in its persona. */
export function startOptionsFor(config: Pick<KioskConfig, 'safety' | 'extraMotion' | 'languageInstructions'>, callMode: CallMode, member: CastEntry, language: LanguageCode): StartOptions {
  return {
    callMode,
    avatar: { persona: personaFor(config, member.persona, language), image: member.imagePath, name: member.name, voice: member.voice },
    // Always said, never left to the service's default (spec §4.1: `disabled` on the gateway): a public
    // kiosk asks for `strict` on every create, spares included (safety-config.ts).
    moderation: config.safety.moderation,
    ...(config.extraMotion !== undefined ? { extraMotion: config.extraMotion } : {}),
  };
}
