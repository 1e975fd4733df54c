/** A catalogue: nested groups of messages (its keys: en.ts). */
export interface Catalogue {
  readonly [key: string]: string | Catalogue;
}
