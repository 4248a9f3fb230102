// Must NOT compile: `rating` is a number, not a string.
import type { SearchableItem } from '../../../dist/index.js';

export const item: SearchableItem = { uniqueIdentifier: 'a', attributes: { rating: '5 stars' } };
