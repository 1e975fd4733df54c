/**
 * Turns what a caller says about the avatar (`StartOptions`: a persona, an image as a file path, link or
 * data: URI, a name, a voice) into a valid create-session body (spec §2.3, §4.1), catching every mistake
 * before anything is sent.
 *
 * - Images from files are read, typed by their magic bytes (never by the extension) and sent as a Base64
 *   data: URI, which must decode to under `MAX_BASE64_IMAGE_BYTES` (spec §2.3, §8).
 * - http(s) links are passed through untouched; the service fetches them (up to `MAX_IMAGE_BYTES`).
 * - A name over `RECOMMENDED_NAME_LENGTH` characters is a warning, not an error (the spec only recommends it).
 *
 * Every failure is `AvatarError('invalid_request', …, {details: {field}})`, with `field` named after
 * `StartOptions` (`callMode`, `avatar.persona`, `avatar.image`, `avatar.name`, `avatar.voice`, `moderation`,
 * `extraMotion`) so a form can point at the right input.
 */
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { readRegularFile } from './bounded-read.ts';
import { AvatarError } from './errors.ts';
import {
  CALL_MODES,
  type CreateSessionRequest,
  type ImageMimeType,
  MAX_BASE64_IMAGE_BYTES,
  MODERATION_VALUES,
  RECOMMENDED_NAME_LENGTH,
  createSessionRequestSchema,
} from './protocol.ts';
import type { StartOptions } from './session-types.ts';

/** The spec's Base64 bound as the messages say it ("20 MB"). */
const BASE64_LIMIT_TEXT = `${MAX_BASE64_IMAGE_BYTES / 2 ** 20} MB`;

export interface AvatarInputDeps {
  /** Reads a local image; defaults to a bounded read that refuses non-regular files and anything of
   *  `MAX_BASE64_IMAGE_BYTES` or more before reading (`readRegularFile`). */
  readFile?: (path: string) => Promise<Uint8Array>;
}

export interface BuiltCreateRequest {
  request: CreateSessionRequest;
  /** Things a person should know that do not stop the call (e.g. a long name). */
  warnings: string[];
}

/** The `<type>` values accepted in `data:image/<type>;base64,` (spec §2.3: PNG, JPG, JPEG, WEBP). */
const DATA_URI_TYPES: Record<string, ImageMimeType> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  jpg: 'image/jpeg',
  webp: 'image/webp',
};

/** The image type from its first bytes: PNG, JPEG or WEBP (`RIFF....WEBP`); `null` for anything else. */
export function sniffImageType(bytes: Uint8Array): ImageMimeType | null {
  const at = (i: number) => bytes[i];
  if (
    bytes.length >= 8 &&
    at(0) === 0x89 && at(1) === 0x50 && at(2) === 0x4e && at(3) === 0x47 &&
    at(4) === 0x0d && at(5) === 0x0a && at(6) === 0x1a && at(7) === 0x0a
  ) {
    return 'image/png';
  }
  if (bytes.length >= 3 && at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'image/jpeg';
  if (
    bytes.length >= 12 &&
    ascii(bytes, 0, 4) === 'RIFF' &&
    ascii(bytes, 8, 12) === 'WEBP'
  ) {
    return 'image/webp';
  }
  return null;
}

/** Validate `options` and build the create-session body. Reads the image file when `avatar.image` is a path. */
export async function buildCreateRequest(options: StartOptions, deps: AvatarInputDeps = {}): Promise<BuiltCreateRequest> {
  const warnings: string[] = [];
  if (typeof options !== 'object' || options === null) invalid('Session options are missing.', 'avatar');

  const callMode = options.callMode as unknown;
  if (callMode === undefined || callMode === null || callMode === '') {
    invalid('Choose a call mode: "audio" or "video".', 'callMode');
  }
  if (typeof callMode !== 'string' || !(CALL_MODES as readonly string[]).includes(callMode)) {
    invalid(`Unknown call mode "${String(callMode)}"; use "audio" or "video".`, 'callMode');
  }

  const avatar = options.avatar as StartOptions['avatar'] | undefined;
  if (typeof avatar !== 'object' || avatar === null) invalid('The avatar (persona and image) is missing.', 'avatar');

  const persona = typeof avatar.persona === 'string' ? avatar.persona.trim() : '';
  if (persona === '') invalid('Describe the avatar\'s persona: who the character is and how it talks.', 'avatar.persona');

  const imageUri = await resolveImage(avatar.image, deps);

  const request: CreateSessionRequest = {
    call_mode: callMode as CreateSessionRequest['call_mode'],
    avatar: { persona, image_uri: imageUri },
  };

  if (avatar.name !== undefined && avatar.name !== null) {
    if (typeof avatar.name !== 'string') invalid('The avatar name must be text.', 'avatar.name');
    const name = avatar.name.trim();
    if (name !== '') {
      const length = [...name].length; // characters, not UTF-16 units
      if (length > RECOMMENDED_NAME_LENGTH) {
        warnings.push(`The avatar name "${name}" has ${length} characters; ${RECOMMENDED_NAME_LENGTH} or fewer are recommended.`);
      }
      request.avatar.name = name;
    }
  }

  if (avatar.voice !== undefined && avatar.voice !== null) {
    if (typeof avatar.voice !== 'string') invalid('The voice must be a voice name.', 'avatar.voice');
    const voice = avatar.voice.trim();
    if (voice !== '') request.avatar.voice = voice; // empty → omitted → the service default (Tina)
  }

  if (options.moderation !== undefined && options.moderation !== null) {
    if (!(MODERATION_VALUES as readonly string[]).includes(options.moderation)) {
      invalid(`Unknown moderation setting "${String(options.moderation)}"; use "strict" or "disabled".`, 'moderation');
    }
    request.moderation = options.moderation;
  }

  if (options.extraMotion !== undefined && options.extraMotion !== null) {
    if (typeof options.extraMotion !== 'boolean') invalid('extraMotion must be true or false.', 'extraMotion');
    request.extra_motion = options.extraMotion;
  }

  // Safety net: the result must satisfy the wire schema the REST client checks again before sending.
  const checked = createSessionRequestSchema.safeParse(request);
  if (!checked.success) {
    invalid(`The session request is invalid (${checked.error.issues[0]?.message ?? 'unknown'}).`, 'avatar');
  }
  return { request: checked.data, warnings };
}

// ---------------------------------------------------------------------------------------------------

async function resolveImage(raw: unknown, deps: AvatarInputDeps): Promise<string> {
  if (typeof raw !== 'string' || raw.trim() === '') {
    invalid('Choose an avatar image: a PNG, JPEG or WEBP file, an http(s) link, or a data: URI.', 'avatar.image');
  }
  const image = raw.trim();

  if (/^data:/i.test(image)) return checkDataUri(image);

  if (/^https?:\/\//i.test(image)) {
    try {
      new URL(image);
    } catch {
      invalid(`The image link is not a valid address: ${shorten(image)}`, 'avatar.image');
    }
    return image; // passed through as is: the service fetches it
  }

  let path = image;
  if (/^file:/i.test(image)) {
    try {
      path = fileURLToPath(image);
    } catch {
      invalid(`The image file link is not valid: ${shorten(image)}`, 'avatar.image');
    }
  } else if (/^[a-z][a-z0-9+.-]+:/i.test(image)) {
    // Two or more letters before the colon: a scheme, not a Windows drive letter ("C:\…").
    invalid(`Unsupported image link "${shorten(image)}"; use an http(s) link, a data: URI or a local file.`, 'avatar.image');
  } else if (image === '~' || image.startsWith('~/')) {
    path = homedir() + image.slice(1);
  }
  // Base64 images must be under MAX_BASE64_IMAGE_BYTES (spec §2.3): refuse a larger file from its size, before reading it.
  return readImageFile(path, deps.readFile ?? ((p) => readRegularFile(p, MAX_BASE64_IMAGE_BYTES - 1, 'The image file')));
}

function checkDataUri(uri: string): string {
  const comma = uri.indexOf(',');
  const header = comma < 0 ? uri.slice(0, 64) : uri.slice(0, comma + 1);
  const m = /^data:image\/([a-z0-9.+-]+);base64,$/i.exec(header);
  if (!m) {
    invalid('An image data URI must start with "data:image/<png|jpeg|jpg|webp>;base64,".', 'avatar.image');
  }
  const type = m[1]!.toLowerCase();
  const declared = DATA_URI_TYPES[type];
  if (!declared) invalid(`Unsupported image type "image/${type}"; use PNG, JPEG or WEBP.`, 'avatar.image');

  const data = uri.slice(comma + 1);
  // Check the size from the length first: cheap even for a huge string (spec §2.3: the decoded bound).
  const decodedBytes = base64DecodedLength(data);
  if (decodedBytes >= MAX_BASE64_IMAGE_BYTES) {
    invalid(`The embedded image is ${formatMb(decodedBytes)}; Base64 images must be under ${BASE64_LIMIT_TEXT}. Use a smaller image or an http(s) link.`, 'avatar.image');
  }
  if (data.length === 0 || data.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) {
    invalid('The embedded image is not valid Base64.', 'avatar.image');
  }
  const head = new Uint8Array(Buffer.from(data.slice(0, 24), 'base64'));
  const actual = sniffImageType(head);
  if (!actual) invalid(`The embedded image is not a PNG, JPEG or WEBP picture (declared image/${type}).`, 'avatar.image');
  if (actual !== declared) {
    invalid(`The embedded image is declared as image/${type} but its content is ${actual}.`, 'avatar.image');
  }
  return uri;
}

async function readImageFile(path: string, readFile: (path: string) => Promise<Uint8Array>): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if (error instanceof AvatarError) invalid(error.message, 'avatar.image', error);
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ENOENT' || code === 'ENOTDIR') invalid(`Image file not found: ${path}`, 'avatar.image', error);
    if (code === 'EISDIR') invalid(`The image path is a folder, not a file: ${path}`, 'avatar.image', error);
    if (code === 'EACCES' || code === 'EPERM') invalid(`The image file cannot be read (permission denied): ${path}`, 'avatar.image', error);
    invalid(`The image file could not be read: ${path}`, 'avatar.image', error);
  }
  if (bytes.length >= MAX_BASE64_IMAGE_BYTES) {
    invalid(
      `The image file ${path} is ${formatMb(bytes.length)}; files are sent as Base64 and must be under ${BASE64_LIMIT_TEXT}. Use a smaller image or an http(s) link.`,
      'avatar.image',
    );
  }
  const type = sniffImageType(bytes);
  if (!type) invalid(`The image file ${path} is not a PNG, JPEG or WEBP picture.`, 'avatar.image');
  return `data:${type};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
}

function base64DecodedLength(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to));
}

function formatMb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function invalid(message: string, field: string, cause?: unknown): never {
  throw new AvatarError('invalid_request', message, cause === undefined ? { details: { field } } : { cause, details: { field } });
}
