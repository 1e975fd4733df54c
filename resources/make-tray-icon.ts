/**
 * Writes the macOS menu-bar icon: resources/trayTemplate.png (16×16) and trayTemplate@2x.png (32×32).
 * A template image is black with an alpha channel; macOS tints it for light and dark menu bars and picks
 * the @2x file on Retina screens by its name. The shape is a head and shoulders (the avatar) inside a
 * speech bubble's outline, drawn with 4×4 supersampling so the edges are smooth at 16 px.
 *
 * Run once: npx tsx resources/make-tray-icon.ts   (plain Node: zlib and a CRC, no image library)
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));

/** Coverage of the shape at (x, y) in a 16-unit square (1 inside, 0 outside). */
function inside(x: number, y: number): boolean {
  // The bubble: a rounded square outline, 1.4 units thick, with a small tail at the bottom left.
  const rr = (cx: number, cy: number, hw: number, hh: number, r: number) => {
    const dx = Math.max(Math.abs(x - cx) - (hw - r), 0);
    const dy = Math.max(Math.abs(y - cy) - (hh - r), 0);
    return Math.hypot(dx, dy) <= r;
  };
  const outer = rr(8, 7, 7.5, 6.5, 3);
  const inner = rr(8, 7, 6.1, 5.1, 1.8);
  const tail = y >= 12.5 && y <= 15.5 && x >= 3 && x <= 6.5 && x - 3 <= (15.5 - y) * 1.1;
  const bubble = (outer && !inner) || tail;
  // The avatar inside: a head and the top of the shoulders, clipped to the bubble's inside.
  const head = Math.hypot(x - 8, y - 5.4) <= 2.1;
  const shoulders = Math.hypot((x - 8) / 4.1, (y - 11.6) / 3.2) <= 1 && inner;
  return bubble || head || shoulders;
}

function render(size: number): Buffer {
  const SS = 4;
  const rows: Buffer[] = [];
  for (let py = 0; py < size; py++) {
    const row = Buffer.alloc(1 + size * 4); // filter byte 0, then RGBA
    for (let px = 0; px < size; px++) {
      let hits = 0;
      for (let sy = 0; sy < SS; sy++) {
        for (let sx = 0; sx < SS; sx++) {
          const x = ((px + (sx + 0.5) / SS) * 16) / size;
          const y = ((py + (sy + 0.5) / SS) * 16) / size;
          if (inside(x, y)) hits++;
        }
      }
      row[1 + px * 4 + 3] = Math.round((hits / (SS * SS)) * 255); // black, alpha = coverage
    }
    rows.push(row);
  }
  return png(size, size, Buffer.concat(rows));
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const b of data) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
function png(width: number, height: number, raw: Buffer): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

writeFileSync(join(here, 'trayTemplate.png'), render(16));
writeFileSync(join(here, 'trayTemplate@2x.png'), render(32));
console.log('wrote resources/trayTemplate.png (16×16) and resources/trayTemplate@2x.png (32×32)');
