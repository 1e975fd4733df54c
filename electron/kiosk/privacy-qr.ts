/**
 * The venue's privacy address as a QR code, drawn on the kiosk with no network: uqr (zero dependencies)
 * encodes it here, and the page draws the modules as one SVG path (`PublicConfig.safety.privacy.qr`), so
 * the page needs no QR code of its own and never fetches a picture. Electron-free.
 */
import { encode } from 'uqr';

/** A QR code as the page draws it: `size` modules a side (no quiet zone: the page adds it), and one SVG
 *  path of 1×1 squares, one `M x y h1v1h-1z` per dark module. */
export interface QrDrawing {
  size: number;
  path: string;
}

/** Medium error correction: a screen seen at an angle, or a smudge on the glass, still scans. */
export function qrDrawing(text: string): QrDrawing {
  const qr = encode(text, { ecc: 'M', border: 0 });
  const parts: string[] = [];
  qr.data.forEach((row, y) => row.forEach((dark, x) => dark && parts.push(`M${x} ${y}h1v1h-1z`)));
  return { size: qr.size, path: parts.join('') };
}
