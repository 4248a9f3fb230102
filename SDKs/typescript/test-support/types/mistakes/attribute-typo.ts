// Must NOT compile: `keyword` is not an attribute (it is `keywords`).
import type { SearchableIndex } from '../../../dist/index.js';

export async function reindexAll(index: SearchableIndex): Promise<void> {
  await index.put({ uniqueIdentifier: 'a', attributes: { title: 'A', keyword: ['x'] } });
}
