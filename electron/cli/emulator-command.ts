/**
 * `emulator`: the local emulator of the avatar service, standalone, for integrators and demos. Prints
 * its URLs and the demo key, then runs until SIGINT/SIGTERM.
 */
import { startEmulator, type EmulatorKnobs } from '../emulator/index.ts';
import type { CliIo } from './probe.ts';

export interface EmulatorCommandOptions {
  host: string;
  port: number;
  warmupMs?: number | undefined;
  latencyMs?: number | undefined;
  json: boolean;
}

export async function runEmulatorCommand(options: EmulatorCommandOptions, io: CliIo): Promise<number> {
  const knobs: Partial<EmulatorKnobs> = {};
  if (options.warmupMs !== undefined) knobs.warmupMs = { audio: 0, video: options.warmupMs };
  if (options.latencyMs !== undefined) knobs.latencyMs = options.latencyMs;
  const emulator = await startEmulator({ host: options.host, port: options.port, knobs, logger: io.logger });
  if (options.json) {
    io.stdout(JSON.stringify({ base_url: emulator.baseUrl, gateway_url: emulator.gatewayUrl, api_key: emulator.apiKey }) + '\n');
  } else {
    io.stdout(
      [
        'Avatar service emulator is running (a local stand-in for the real service; no credits are real).',
        `  direct surface {base_url}:    ${emulator.baseUrl}`,
        `  gateway surface {gateway_url}: ${emulator.gatewayUrl}`,
        `  demo API key:                 ${emulator.apiKey}`,
        '',
        `Try: npm run --silent cli -- probe --base-url ${emulator.baseUrl} --api-key ${emulator.apiKey}`,
        'Press Ctrl+C to stop.',
        '',
      ].join('\n'),
    );
  }
  await new Promise<void>((resolve) => {
    const stop = io.onSignal(() => {
      stop();
      resolve();
    });
  });
  await emulator.close();
  if (!options.json) io.stdout('Emulator stopped.\n');
  return 0;
}
