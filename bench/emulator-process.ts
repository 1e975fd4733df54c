/**
 * The emulator in its own process for the bench, so the bench's heap, handles and CPU time are the
 * client's alone. Knobs come as one JSON argument; prints `{base_url, api_key}` once listening and
 * stops on SIGTERM or when its parent goes away.
 */
import { startEmulator, type EmulatorKnobs } from '../electron/emulator/index.ts';

const knobs = JSON.parse(process.argv[2] ?? '{}') as Partial<EmulatorKnobs>;
const emulator = await startEmulator({ knobs });
process.stdout.write(JSON.stringify({ base_url: emulator.baseUrl, api_key: emulator.apiKey }) + '\n');
const stop = () => void emulator.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('disconnect', stop);
process.stdin.on('end', stop);
process.stdin.resume();
