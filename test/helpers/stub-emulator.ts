/**
 * A stand-in for the built-in emulator, for tests of the kiosk's services without a network: demo mode "starts" it
 * without a server (the address answers nothing), and the test counts the starts and closes.
 */
import type { EmulatorHandle } from '../../electron/emulator/index.ts';

export function stubEmulator() {
  const calls = { started: 0, closed: 0 };
  let last: EmulatorHandle | null = null;
  // A new handle for each start, as the real emulator gives.
  const start = async () => {
    calls.started++;
    last = {
      baseUrl: 'http://127.0.0.1:9',
      gatewayUrl: 'http://127.0.0.1:9/gateway',
      apiKey: 'demo-key-0000',
      close: async () => {
        calls.closed++;
      },
    } as unknown as EmulatorHandle;
    return last;
  };
  return {
    start,
    calls,
    /** The handle the last start gave (a test may replace its `close`). */
    get handle(): EmulatorHandle {
      if (!last) throw new Error('the stub emulator was never started');
      return last;
    },
  };
}
