/**
 * `cli visitors`: the visitor funnel from the kiosk's store file (docs/analytics.md), thresholded as every
 * export is (counts under the threshold are "fewer than N"): today, the last 7 days by day, the largest
 * drop. Reads only: a damaged file is reported, never moved (the kiosk keeps it aside when it starts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AvatarError } from '../core/errors.ts';
import { buildVisitorReport } from '../kiosk/visitor-funnel.ts';
import { NO_PASSERS_BY_LINE, exportFunnel, funnelText } from '../kiosk/visitor-funnel-export.ts';
import { VISITOR_FUNNEL_FILE, readFile } from '../kiosk/visitor-funnel-store.ts';
import { defaultUserData } from './ops-commands.ts';
import type { CliIo } from './probe.ts';
import { cell, jsonLine } from './terminal-safe.ts';

export interface VisitorsCommandOptions {
  /** The store file; default: visitor-funnel.json in the kiosk's data folder. */
  file?: string | undefined;
  json: boolean;
  /** For tests: "now". */
  nowMs?: number;
}

export function runVisitorsCommand(options: VisitorsCommandOptions, io: CliIo): number {
  const path = options.file ?? join(defaultUserData(io.env), VISITOR_FUNNEL_FILE);
  if (!existsSync(path)) throw new AvatarError('invalid_request', `No visitor counts at ${path} (the kiosk writes them once it has counted someone); pass --file PATH.`);
  const read = readFile(path);
  if (!read.ok) throw new AvatarError('invalid_config', `The visitor counts file ${path} could not be read: ${read.message}.`);
  const buckets = { hours: new Map(Object.entries(read.file.hours)), days: new Map(Object.entries(read.file.days)) };
  // Whether the kiosk counts passers-by is in its settings, not in this file: any count of them says it does.
  const presence = [...buckets.hours.values(), ...buckets.days.values()].some((c) => c.noticed > 0);
  const report = buildVisitorReport(buckets, read.file.timeZone, options.nowMs ?? Date.now(), presence);
  if (options.json) io.stdout(jsonLine(exportFunnel(report)) + '\n');
  else io.stdout(funnelText(report, NO_PASSERS_BY_LINE).split('\n').map(cell).join('\n'));
  return 0;
}
