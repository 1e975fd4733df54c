/**
 * Reading a local file whose path comes from configuration, without trusting it: `stat` first, so a
 * device, a FIFO (which would block the read) or a folder is refused, and so is anything larger than the
 * caller's limit, before a single byte is read into memory. The handle is checked again after opening
 * (the path may have been swapped in between), and the read stops at the size seen then.
 */
import { open, stat } from 'node:fs/promises';
import { AvatarError } from './errors.ts';

export async function readRegularFile(path: string, maxBytes: number, label = 'The file'): Promise<Uint8Array> {
  const before = await stat(path);
  if (before.isDirectory()) throw new AvatarError('invalid_request', `${label} ${path} is a folder, not a file.`);
  if (!before.isFile()) throw notRegular(path, label);
  if (before.size > maxBytes) throw tooLarge(path, label, before.size, maxBytes);
  const handle = await open(path, 'r');
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw notRegular(path, label);
    if (opened.size > maxBytes) throw tooLarge(path, label, opened.size, maxBytes);
    const buffer = new Uint8Array(opened.size);
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesRead } = await handle.read(buffer, offset, buffer.length - offset, offset);
      if (bytesRead === 0) break; // shrank since the stat: what is there is what we have
      offset += bytesRead;
    }
    return offset === buffer.length ? buffer : buffer.subarray(0, offset);
  } finally {
    await handle.close();
  }
}

function notRegular(path: string, label: string): AvatarError {
  return new AvatarError('invalid_request', `${label} ${path} is not a regular file (a device or a pipe); give the path of a picture file.`);
}

function tooLarge(path: string, label: string, size: number, maxBytes: number): AvatarError {
  return new AvatarError('invalid_request', `${label} ${path} is ${(size / 1024 / 1024).toFixed(1)} MB; the limit is ${Math.round(maxBytes / 1024 / 1024)} MB.`);
}
