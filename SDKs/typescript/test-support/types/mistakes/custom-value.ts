// Must NOT compile: a custom attribute's value is a string, number, boolean, Date, list of
// strings or null — not an object.
import type { SearchableIndex } from '../../../dist/index.js';

export async function reindexAll(index: SearchableIndex): Promise<void> {
  await index.put({ uniqueIdentifier: 'a', attributes: { custom: { author: { name: 'Ada' } } } });
}
