/**
 * `voices list` and `voices clone`: the caller's custom voices (spec §4.4, §4.5). Built-in voices are not
 * listed by the service.
 */
import { AvatarError } from '../core/errors.ts';
import { ServiceClient } from '../core/rest-client.ts';
import type { CliIo } from './probe.ts';
import { resolveTarget, type TargetOptions } from './target.ts';

export interface VoicesOptions extends TargetOptions {
  audioUrl?: string | undefined;
  voice?: string | undefined;
  language?: string | undefined;
  json: boolean;
}

export async function runVoicesCommand(sub: string | undefined, options: VoicesOptions, io: CliIo): Promise<number> {
  if (sub !== 'list' && sub !== 'clone') {
    throw new AvatarError('invalid_request', 'Use "voices list" or "voices clone --audio-url URL --voice NAME [--language en]".');
  }
  if (sub === 'clone' && (!options.audioUrl || !options.voice)) {
    throw new AvatarError('invalid_request', 'voices clone needs --audio-url URL (an mp3 or wav sample) and --voice NAME.');
  }
  const resolved = await resolveTarget(options, io.env, io.logger);
  try {
    const client = new ServiceClient({ target: resolved.target, logger: io.logger });
    if (resolved.emulator && !options.json) {
      io.stderr('note: no --base-url/--gateway-url given; using a fresh embedded emulator (its voices vanish when this command ends).\n');
    }
    if (sub === 'list') {
      const { voices } = await client.listVoices();
      if (options.json) io.stdout(JSON.stringify({ voices }) + '\n');
      else if (voices.length === 0) io.stdout('No custom voices yet. Built-in voices (such as Tina) are not listed by the service.\n');
      else io.stdout(voices.map((v) => `${v.voice}\n`).join(''));
      return 0;
    }
    const result = await client.cloneVoice({
      audio_url: options.audioUrl!,
      voice: options.voice!,
      ...(options.language ? { language: options.language } : {}),
    });
    if (options.json) io.stdout(JSON.stringify(result) + '\n');
    else io.stdout(`Cloned voice "${result.voice}". Use it with --voice ${result.voice}.\n`);
    return 0;
  } finally {
    await resolved.emulator?.close();
  }
}
