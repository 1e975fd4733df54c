/**
 * The sandboxed preload: exposes exactly `KioskApi` as `window.kiosk`. Never `ipcRenderer` itself, never
 * a generic invoke: each method names its channel, sends at most one argument, and every call resolves
 * with a Result (an unexpected IPC failure becomes `{ok:false}`, never a rejection). `onEvent` registers
 * one wrapper per listener and returns its unsubscribe.
 *
 * Built by electron-vite into ONE CommonJS file (out/preload/index.cjs) whose only require is `electron`
 * (a sandboxed preload cannot load other modules). Imports from contract.ts are constants and types only.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { CHANNELS, EVENT_CHANNEL, type KioskApi, type KioskEvent, type Result } from '../contract.ts';

async function invoke<T>(channel: string, arg?: unknown): Promise<Result<T>> {
  try {
    return (await (arg === undefined ? ipcRenderer.invoke(channel) : ipcRenderer.invoke(channel, arg))) as Result<T>;
  } catch (error) {
    return { ok: false, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
  }
}

const api: KioskApi = {
  session: {
    start: (args) => invoke(CHANNELS.sessionStart, args ?? {}),
    hangup: (args) => invoke(CHANNELS.sessionHangup, args),
    getState: () => invoke(CHANNELS.sessionGetState),
    setMuted: (args) => invoke(CHANNELS.sessionSetMuted, args),
    reportMediaError: (args) => invoke(CHANNELS.sessionReportMediaError, args),
    onEvent(listener) {
      if (typeof listener !== 'function') return () => {};
      const wrapped = (_event: IpcRendererEvent, payload: KioskEvent) => listener(payload);
      ipcRenderer.on(EVENT_CHANNEL, wrapped);
      let subscribed = true;
      return () => {
        if (!subscribed) return;
        subscribed = false;
        ipcRenderer.removeListener(EVENT_CHANNEL, wrapped);
      };
    },
  },
  config: {
    get: () => invoke(CHANNELS.configGet),
    setApiKey: (args) => invoke(CHANNELS.configSetApiKey, args),
  },
  // --- staff operations (issue 6) ---
  staff: {
    pinState: () => invoke(CHANNELS.staffPinState),
    setPin: (args) => invoke(CHANNELS.staffSetPin, args),
    unlock: (args) => invoke(CHANNELS.staffUnlock, args),
    lock: () => invoke(CHANNELS.staffLock),
    status: () => invoke(CHANNELS.staffStatus),
    getSettings: () => invoke(CHANNELS.staffGetSettings),
    saveSettings: (args) => invoke(CHANNELS.staffSaveSettings, args),
    setApiKey: (args) => invoke(CHANNELS.staffSetApiKey, args),
    listVoices: () => invoke(CHANNELS.staffListVoices),
    cloneVoice: (args) => invoke(CHANNELS.staffCloneVoice, args),
    runDoctor: () => invoke(CHANNELS.staffRunDoctor),
    ledgerTotals: () => invoke(CHANNELS.staffLedgerTotals),
    ledgerCsv: (args) => invoke(CHANNELS.staffLedgerCsv, args ?? {}),
    logTail: () => invoke(CHANNELS.staffLogTail),
    setOpenAtLogin: (args) => invoke(CHANNELS.staffSetOpenAtLogin, args),
    exitKiosk: () => invoke(CHANNELS.staffExitKiosk),
    restart: () => invoke(CHANNELS.staffRestart),
  },
  app: {
    reportError: (args) => invoke(CHANNELS.appReportError, args),
  },
  // --- fast start (issue 7) ---
  attract: {
    report: (args) => invoke(CHANNELS.attractReport, args),
  },
};

if (process.contextIsolated) {
  contextBridge.exposeInMainWorld('kiosk', api);
} else {
  // Only the agora-native window (contextIsolation off, see electron/main/window.ts) gets here.
  (globalThis as unknown as { kiosk: KioskApi }).kiosk = Object.freeze(api);
}
