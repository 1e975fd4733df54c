/** A Logger that keeps each line (level, message, fields) for a test to read back. */
import type { Logger } from '../../electron/core/log.ts';

export interface LogLine {
  level: string;
  message: string;
  data: Record<string, unknown> | undefined;
}

export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (message: string, data?: Record<string, unknown>) => void lines.push({ level, message, data });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
