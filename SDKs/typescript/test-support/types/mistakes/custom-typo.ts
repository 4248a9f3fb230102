// Must NOT compile: the declared custom attributes have `pages`, not `pgaes`.
import type { SearchableItem } from '../../../dist/index.js';

interface BookAttributes { pages?: number; isbn?: string }

export const item: SearchableItem<BookAttributes> = { uniqueIdentifier: 'a', attributes: { custom: { pgaes: 3 } } };
