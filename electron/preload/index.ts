/**
 * The sandboxed preload: exposes exactly `KioskApi` as `window.kiosk`, built from the contract's table by
 * `buildKioskApi`. Never `ipcRenderer` itself, never a generic invoke: each method names its channel,
 * sends at most one argument, and every call resolves with a Result (an unexpected IPC failure becomes
 * `{ok:false}`, never a rejection). `onEvent` registers one wrapper per listener and returns its
 * unsubscribe.
 *
 * Built by electron-vite into ONE CommonJS file (out/preload/index.cjs) whose only require is `electron`
 * (a sandboxed preload cannot load other modules): the contract and zod are bundled in.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { API_SHAPE, EVENT_CHANNEL, buildKioskApi, type KioskApi, type KioskEvent, type Result } from '../contract.ts';

async function invoke(channel: string, arg?: unknown): Promise<Result<unknown>> {
  try {
    return (await (arg === undefined ? ipcRenderer.invoke(channel) : ipcRenderer.invoke(channel, arg))) as Result<unknown>;
  } catch (error) {
    return { ok: false, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
  }
}

function onEvent(listener: (event: KioskEvent) => void): () => void {
  if (typeof listener !== 'function') return () => {};
  const wrapped = (_event: IpcRendererEvent, payload: KioskEvent) => listener(payload);
  ipcRenderer.on(EVENT_CHANNEL, wrapped);
  let subscribed = true;
  return () => {
    if (!subscribed) return;
    subscribed = false;
    ipcRenderer.removeListener(EVENT_CHANNEL, wrapped);
  };
}

const api: KioskApi = buildKioskApi(API_SHAPE, invoke, onEvent);

if (process.contextIsolated) {
  contextBridge.exposeInMainWorld('kiosk', api);
} else {
  // Only the agora-native window (contextIsolation off, see electron/main/window.ts) gets here.
  (globalThis as unknown as { kiosk: KioskApi }).kiosk = api;
}
