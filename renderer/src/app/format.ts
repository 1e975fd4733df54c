/** Small display formatters (pure). */

/** 0 → "0:00", 75 → "1:15", 3725 → "1:02:05". */
export function clockText(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** 42 → "42 seconds", 60 → "1 minute", 134 → "2 min 14 s". */
export function durationText(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  if (s < 60) return `${s} second${s === 1 ? '' : 's'}`;
  const m = Math.floor(s / 60);
  const r = s % 60;
  if (r === 0) return `${m} minute${m === 1 ? '' : 's'}`;
  return `${m} min ${r} s`;
}

export function creditsText(credits: number): string {
  const n = Number.isInteger(credits) ? credits.toLocaleString('en-US') : credits.toFixed(1);
  return `${n} credit${credits === 1 ? '' : 's'}`;
}
