/**
 * The bundled demo avatar (resources/): image, persona, name and voice used when the caller gives none.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const RESOURCES_DIR = join(import.meta.dirname, '../../resources');
export const DEMO_IMAGE_PATH = join(RESOURCES_DIR, 'demo-avatar.png');

export interface DemoAvatar {
  image: string;
  persona: string;
  name: string;
  voice: string;
}

export function loadDemoAvatar(): DemoAvatar {
  const persona = readFileSync(join(RESOURCES_DIR, 'demo-persona.txt'), 'utf8').trim();
  const meta = JSON.parse(readFileSync(join(RESOURCES_DIR, 'demo-avatar.json'), 'utf8')) as { name?: unknown; voice?: unknown };
  return {
    image: DEMO_IMAGE_PATH,
    persona,
    name: typeof meta.name === 'string' ? meta.name : 'Ava',
    voice: typeof meta.voice === 'string' ? meta.voice : 'Tina',
  };
}
