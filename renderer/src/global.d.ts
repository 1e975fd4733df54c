import type { KioskApi } from '../../electron/contract.ts';

declare global {
  interface Window {
    /** Exposed by the preload (contextBridge) or, in the E2E tests, by the test bridge. */
    kiosk?: KioskApi;
  }
}
export {};
