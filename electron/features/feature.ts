/**
 * A feature of the running kiosk: a module that hangs behaviour onto the kiosk's services once they exist,
 * and lets go of it when the kiosk stops. Both hosts start the one list in features/index.ts in its order
 * and stop it in reverse; a feature asks the host (host.ts) for what only a host can do.
 */
import type { Logger } from '../core/log.ts';
import type { ChannelRegistry } from '../kiosk/channels.ts';
import type { Kiosk } from '../kiosk/compose.ts';
import type { HostSettings, KioskHost } from './host.ts';

export interface FeatureContext {
  /** The kiosk's services (kiosk/compose.ts): each feature uses the ones it needs. */
  readonly kiosk: Kiosk;
  /** The registry the page's calls are dispatched through: a feature that serves channels registers them. */
  readonly channels: ChannelRegistry;
  readonly settings: HostSettings;
  readonly host: KioskHost;
  readonly logger: Logger;
}

export interface Feature {
  readonly name: string;
  /** Runs before the page loads; an await here holds the attract screen back (keep it bounded). */
  start(context: FeatureContext): Promise<void> | void;
  stop?(): Promise<void> | void;
}
