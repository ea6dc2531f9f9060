const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a canonical UUID string (any version); ids in paths are checked with this before a lookup. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
