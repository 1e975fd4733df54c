/**
 * The kiosk's appearance: what the page is told of the kiosk (the `PublicConfig` view model, `config:get`),
 * the cast as checked at start-up (a bad member left out of the attract screen, its problem listed for
 * staff), the attract screen's pictures, and the start-up problems that still apply (`attention`).
 *
 * The view model carries no secret: of the key only whether there is one and where it came from.
 * Pictures are read once per configuration (as data: URLs; the page's CSP allows no remote image).
 */
import { extname } from 'node:path';
import { ok, type AttentionItem, type PublicConfig, type Result } from '../contract.ts';
import { readRegularFile } from '../core/bounded-read.ts';
import type { AvatarError, ErrorInfo } from '../core/errors.ts';
import { MAX_BASE64_IMAGE_BYTES } from '../core/protocol.ts';
import type { Logger } from '../core/log.ts';
import { castAttention } from './attention.ts';
import { checkCast, configuredPortrait, publicCast, resolveVideoFit, usableCast } from './cast.ts';
import type { CastEntry, KioskConfig } from './config.ts';
import { publicSafety } from './safety-config.ts';
import type { Availability } from './availability.ts';
import type { AvatarVolume } from './avatar-volume.ts';
import type { ServiceConnectionView } from './service-connection.ts';
import type { ServiceHealthMonitor } from './service-health.ts';
import type { ServiceKeyView } from './service-key.ts';

export interface AppearanceOptions {
  config: KioskConfig;
  logger: Logger;
  /** Read the avatar image as a data: URL for the attract screen (null when unavailable). */
  loadAvatarImage?: (path: string) => Promise<string | null>;
  /** Whether the screen is portrait (for the default `video.fit`); default: the configured window's shape. */
  portrait?: boolean;
  /** Asked for a synthetic microphone and camera (`--demo-devices`); honoured in demo mode only. */
  demoDevices?: boolean;
  /** Problems found before the kiosk was created (kiosk/attention.ts); cast problems are added to them. */
  startupAttention?: AttentionItem[];
  key: Pick<ServiceKeyView, 'present' | 'source' | 'weaklyProtected'>;
  connection: Pick<ServiceConnectionView, 'mode'>;
  availability: Pick<Availability, 'opening' | 'hold'>;
  volume: Pick<AvatarVolume, 'percent'>;
  /** Whether the service answers (the page shows the out-of-order screen while it does not). */
  health?: Pick<ServiceHealthMonitor, 'current'>;
}

export interface Appearance {
  /** `config:get`: the page's view of the kiosk. */
  getConfig(): Promise<Result<PublicConfig>>;
  /** The members a visitor may pick (the good ones, or everyone when none is good); [0] is the default. */
  readonly cast: readonly CastEntry[];
  /** Why a member of the configured cast cannot be used (undefined when it can). */
  castError(id: string): AvatarError | undefined;
  /** Cast members whose image or persona failed the start-up check (each message names the avatar). */
  readonly castProblems: ErrorInfo[];
  /** Start-up problems that still apply, for staff (the ones given at creation, then the cast's). */
  readonly attention: AttentionItem[];
  /** The configuration changed: check the cast again and read the pictures anew. */
  reload(): Promise<void>;
}

export async function createAppearance(options: AppearanceOptions): Promise<Appearance> {
  const { config, logger } = options;
  const loadAvatarImage = options.loadAvatarImage ?? readImageAsDataUrl;
  const startupItems = [...(options.startupAttention ?? [])];
  let imageDataUrl: Promise<string | null> | null = null;
  // Only a configured `avatars` list is checked up front.
  let castErrors = new Map<string, AvatarError>();
  let cast = config.cast;
  let castImages: Promise<Map<string, string | null>> | null = null;

  /** (Re)check the cast of the current config (at start and after the staff panel changes settings). */
  async function loadCast(): Promise<void> {
    castErrors = config.avatars ? await checkCast(config.cast) : new Map<string, AvatarError>();
    for (const e of castErrors.values()) logger.error('An avatar of the cast cannot be used', { message: e.message });
    cast = usableCast(config.cast, castErrors);
    castImages = null;
  }
  await loadCast();

  function attention(): AttentionItem[] {
    // Adult asked for and refused (no region, a region not allowed, config.json under a policy): staff see why.
    const refusal = config.safety.refusal;
    const safety: AttentionItem[] = refusal ? [{ kind: 'policy', code: 'invalid_config', message: refusal }] : [];
    return [...startupItems, ...safety, ...castAttention([...castErrors.values()].map((e) => e.toInfo()))];
  }

  function publicConfig(members: PublicConfig['cast']): PublicConfig {
    // PublicConfig.avatar is cast[0] (with one avatar, exactly the `avatar` block as before).
    const first = cast[0]!;
    const { key, connection, availability } = options;
    return {
      mode: connection.mode,
      hasApiKey: key.present,
      apiKeySource: key.source,
      apiKeyWeaklyProtected: key.weaklyProtected,
      callMode: config.callMode,
      allowModeChoice: config.allowModeChoice,
      avatar: { name: first.name, imageDataUrl: members[0]!.imageDataUrl, voice: first.voice },
      windowMode: config.window.mode,
      rtcEngine: config.rtcEngine,
      returnToAttractSeconds: config.returnToAttractSeconds,
      countdownWarningSeconds: config.countdownWarningSeconds,
      idle: { promptSeconds: config.idle.promptSeconds, hangupSeconds: config.idle.hangupSeconds },
      maxCallSeconds: config.maxCallSeconds ?? null,
      cast: members,
      video: { fit: resolveVideoFit(config, options.portrait ?? configuredPortrait(config)) },
      companion: { pushToTalk: config.companion.pushToTalk, shortcut: config.companion.shortcut },
      prewarm: { mode: config.prewarm.mode, prejoin: config.prewarm.prejoin },
      rtc: { cloudProxy: config.rtc.cloudProxy },
      presence: { cameraEnabled: config.presence.cameraEnabled },
      attention: attention().length,
      opening: availability.opening,
      hold: availability.hold,
      ...(options.health ? { service: { status: options.health.current.status, ok: options.health.current.ok } } : {}),
      languages: [...config.languages],
      defaultLanguage: config.defaultLanguage,
      accessibility: { default: config.accessibility.default, reachBandPercent: config.accessibility.reachBandPercent },
      safety: publicSafety(config),
      // Never with a real key: the synthetic devices exist only while the emulator answers calls.
      demoDevices: connection.mode === 'demo' && options.demoDevices === true,
      avatarVolume: options.volume.percent,
    };
  }

  return {
    async getConfig() {
      imageDataUrl ??= loadAvatarImage(config.avatar.imagePath).catch((error: unknown) => {
        logger.warn('Could not load the avatar image for the attract screen', { error: String(error) });
        return null;
      });
      castImages ??= (async () => {
        const images = new Map<string, string | null>();
        for (const m of cast) {
          images.set(m.id, m.imagePath === config.avatar.imagePath ? await imageDataUrl : await loadAvatarImage(m.imagePath).catch(() => null));
        }
        return images;
      })();
      return ok(publicConfig(publicCast(cast, await castImages)));
    },
    get cast() {
      return cast;
    },
    castError: (id) => castErrors.get(id),
    get castProblems() {
      return [...castErrors.values()].map((e) => e.toInfo());
    },
    get attention() {
      return attention();
    },
    async reload() {
      imageDataUrl = null;
      await loadCast();
    },
  };
}

const IMAGE_MIME: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp' };

/** Default attract-screen image loader: local files become data: URLs; data: URIs pass; URLs don't. */
export async function readImageAsDataUrl(path: string): Promise<string | null> {
  if (path.startsWith('data:image/')) return path;
  if (/^https?:/i.test(path)) return null; // the CSP allows no remote images; the session still uses it
  const mime = IMAGE_MIME[extname(path).toLowerCase()];
  if (!mime) return null;
  // Sized before it is read: a huge file or a device named as the picture must not fill main's memory.
  // The picture a session sends as Base64: the spec's bound for that (§2.3) also bounds what is read.
  const bytes = await readRegularFile(path, MAX_BASE64_IMAGE_BYTES, 'The avatar picture');
  return `data:${mime};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
}
