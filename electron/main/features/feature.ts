/**
 * A feature of the running kiosk: a module that hangs behaviour onto the kiosk's services and the window once
 * both exist, and lets go of it when the app quits. main/index.ts starts them in its list's order and
 * stops them in reverse; adding one is one line there.
 */
import type { BrowserWindow } from 'electron';
import type { Logger } from '../../core/log.ts';
import type { ProxyResolver } from '../../core/proxy.ts';
import type { ChannelRegistry } from '../../kiosk/channels.ts';
import type { Kiosk } from '../../kiosk/compose.ts';
import type { Lifecycle } from '../../kiosk/lifecycle.ts';
import type { MainLog } from '../../operations/log-file.ts';
import type { LoadedSettings } from '../store.ts';

export interface FeatureContext {
  /** The kiosk's services (kiosk/compose.ts): each feature uses the ones it needs. */
  readonly kiosk: Kiosk;
  /** The registry the page's calls are dispatched through: a feature that serves channels registers them. */
  readonly channels: ChannelRegistry;
  readonly settings: LoadedSettings;
  readonly lifecycle: Lifecycle;
  readonly window: BrowserWindow;
  readonly logger: Logger;
  /** The redacted main log (null until it is open). */
  readonly mainLog: MainLog | null;
  /** The venue's proxy as Chromium resolves it, for connections main opens itself (core/proxy.ts). */
  readonly proxy: ProxyResolver;
  /** Reload the kiosk page on purpose (the fleet's `reload`, new settings); if it fails, the page is
   *  brought back like after a crash (kiosk/renderer-recovery.ts) and the promise rejects. */
  reloadPage(): Promise<void>;
}

export interface Feature {
  readonly name: string;
  /** Runs before the page loads; an await here holds the attract screen back (keep it bounded). */
  start(context: FeatureContext): Promise<void> | void;
  stop?(): Promise<void> | void;
}
